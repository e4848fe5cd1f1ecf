/**
 * The effect of `pendingTool` and `effectRecorded` with calls open: run the turn's open calls
 * by the scheduler's rule (tool-scheduler.ts), each outcome recorded in the ledger as it comes
 * back; a call that needs a decision it does not have makes the turn wait (DECISION_NEEDED).
 */
import type { AnnouncedEffect } from '../../machines/agent-loop.effects.ts';
import { awaitsDecision, openCalls } from '../../machines/agent-loop.logic.ts';
import type { AgentContext, AgentEvent, PendingCall, ToolOutcome } from '../../machines/agent-loop.types.ts';
import type { SessionControl } from '../core/session.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';
import { type Finished, type Job, mayOverlap, runInOrder } from './tool-scheduler.ts';

/** What the tool turn uses of the run: its tools and how many may run at once, a way to run a call and record outcomes, and the stops. */
export interface ToolTurnParts {
  readonly registry: ToolRegistry;
  /** How many calls of one reply may run at once. */
  readonly toolConcurrency: number;
  readonly signal: AbortSignal | undefined;
  readonly control: Pick<SessionControl, 'asked'>;
  context(): AgentContext;
  runCall(call: PendingCall): Promise<ToolOutcome>;
  /** Records outcomes that finished together (tool-scheduler.ts: RecordGroup). */
  record(group: readonly Finished[], othersRunning: boolean): Promise<AnnouncedEffect | null>;
  step(event: AgentEvent): Promise<AnnouncedEffect | null>;
}

/** Runs until each call is recorded (the turn's close comes next), one waits for a decision, or a stop was asked for. */
export function runToolTurn(session: ToolTurnParts): Promise<AnnouncedEffect | null> {
  const queue = openCalls(session.context());
  // Not an async function (it would only add a frame around runInOrder's promise): its one failure is a rejection too.
  if (queue.length === 0) return Promise.reject(new Error('runPendingTools announced with no open call'));
  const { registry, toolConcurrency, signal } = session;
  // Methods, not arrow functions in properties: a build that keeps function names (tsx) names each such arrow as it is made, several times a turn.
  const jobs = queue.map(
    (call): Job => ({
      call,
      overlaps: mayOverlap(registry, call),
      async finish() {
        return { call, outcome: await session.runCall(call) };
      },
    }),
  );
  return runInOrder(jobs, {
    limit: toolConcurrency,
    signal,
    record(group, othersRunning) {
      return session.record(group, othersRunning);
    },
    stopAsked() {
      return session.control.asked();
    },
    instead(job) {
      return awaitsDecision(session.context(), job.call) ? session.step({ type: 'DECISION_NEEDED', tool_use_id: job.call.id, at: Date.now() }) : null;
    },
  }, 'runPendingTools');
}
