/**
 * What cancel and pause mean where a run starts, resumes and ends (called by run-api): a
 * cancelled run is never resumed; a resume clears a pause (it is the "go on") and applies a
 * cancel that was asked while no process drove the run; a request is removed from the inbox only
 * once what it asked is durable.
 */
import path from 'node:path';
import { FINAL_STATES, type AgentContext, type AgentStateName } from '../../machines/agent-loop.types.ts';
import type { RunResult } from '../core/run-events.ts';
import type { RunStore } from '../store/store.ts';
import { RunCancelledError } from './control-request.ts';

/** Throws RunCancelledError for a cancelled run, with the fork command that tries again from one of its steps. */
export function refuseCancelled(location: string, state: AgentStateName, context: AgentContext): void {
  if (state !== 'cancelled' || !context.cancellation) return;
  throw new RunCancelledError(location, context.cancellation, forkAdviceFor(location));
}

/** `invocation`: how the user's shell starts the CLI (the CLI says it as every hint does). */
export function forkAdviceFor(location: string, invocation = 'durable-agent'): string {
  const where = path.basename(location) === '.durable-agent' ? `--dir ${path.dirname(location)}` : '--database-url URL --run ID';
  return `To try again from one of its steps, fork it into a new run: ${invocation} fork ${where} --to NEWDIR (the cancelled run stays as it is).`;
}

/**
 * Before a resume drives the run: clears a pause (unless `keepPause`: a fleet worker, whose
 * claim skips paused runs, honours a pause asked after it claimed), drops a cancel that came too
 * late for a finished run, and says whether a cancel waits for this unfinished run.
 */
export async function controlAtResume(store: RunStore, state: AgentStateName, keepPause: boolean): Promise<boolean> {
  const inbox = store.control;
  if (!inbox) return false;
  const requests = await inbox.read();
  if (requests.length === 0) return false;
  if (!keepPause && requests.some((request) => request.kind === 'pause')) await inbox.settle('pause');
  if (!requests.some((request) => request.kind === 'cancel')) return false;
  if (FINAL_STATES.includes(state)) {
    await inbox.settle('cancel');
    return false;
  }
  return true;
}

/** Once the run's cancelled record is durable, its requests are done with. */
export async function settleControl(store: RunStore, result: RunResult): Promise<RunResult> {
  if (result.status === 'cancelled' && store.control) {
    await store.control.settle('cancel');
    await store.control.settle('pause');
  }
  return result;
}
