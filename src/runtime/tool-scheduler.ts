/**
 * Runs the open calls of a turn, the calls of one reply side by side where that is safe.
 *
 * The rule, in the model's order of the calls:
 * - A call that may overlap others (its tool is read-only, or declares `concurrencySafe`) starts
 *   as soon as fewer than `toolConcurrency` calls are in flight and no call that runs alone is.
 * - Any other call runs alone: it starts once every call before it has finished, and no call
 *   after it starts until it has finished. So side effects happen one at a time, in the model's
 *   order, and never beside anything else of the turn. A call that needs a person's decision
 *   runs alone too; until it has one, the turn waits on it (DECISION_NEEDED) with nothing in flight.
 * - "Finished" means its outcome is in the ledger. Each outcome is recorded the moment its call
 *   returns, by one writer (in completion order, never two appends at once); the user message
 *   that closes the turn still lists the results in the model's order (toolResultsMessageOf).
 *
 * If a record fails (a crash point, a lost lock), nothing more of the turn is recorded and the
 * error goes up at once: the calls still in flight are left to finish unrecorded, as a killed
 * process would leave them, and a resume reconciles them like any open call.
 */
import type { AnnouncedEffect } from '../../machines/agent-loop.effects.ts';
import { awaitsDecision, openCalls } from '../../machines/agent-loop.logic.ts';
import type { AgentContext, PendingCall, ToolOutcome } from '../../machines/agent-loop.types.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';

export const DEFAULT_TOOL_CONCURRENCY = 4;
export const TOOL_CONCURRENCY_RANGE = { min: 1, max: 64 } as const;

/** What the scheduler needs of the run's settings. */
export interface SchedulerParts {
  readonly registry: ToolRegistry;
  readonly toolConcurrency: number;
  /** Aborted: start nothing more; what is in flight is recorded first. */
  readonly signal: AbortSignal | undefined;
}

/** What the scheduler needs of the driver. */
export interface ToolTurn {
  context(): AgentContext;
  /** Runs the call (the tool's effect), returning its outcome. */
  run(call: PendingCall): Promise<ToolOutcome>;
  /** Records the outcome (the ledger write); resolves to the effect the transition announced. */
  record(call: PendingCall, outcome: ToolOutcome): Promise<AnnouncedEffect | null>;
  /** The call needs a decision it does not have: record that it waits (DECISION_NEEDED). */
  waitFor(call: PendingCall): Promise<AnnouncedEffect | null>;
  /** A cancel or pause was asked: start nothing more (what is in flight is recorded first; the step boundary takes it up). */
  stopAsked?(): Promise<boolean>;
}

/** The tool may run beside other calls of its turn. An unknown tool is rejected without running. */
export function mayOverlap(registry: ToolRegistry, call: PendingCall): boolean {
  if (call.needs !== undefined) return false;
  const tool = registry.get(call.name);
  return !tool || tool.readOnly || tool.concurrencySafe === true;
}

export class ToolConcurrencyError extends RangeError {
  override readonly name = 'ToolConcurrencyError';
  constructor(readonly value: unknown) {
    super(
      `toolConcurrency must be a whole number from ${TOOL_CONCURRENCY_RANGE.min} to ${TOOL_CONCURRENCY_RANGE.max} ` +
        `(got ${String(value)}); nothing was started. 1 runs every call of a reply one after another.`,
    );
  }
}

export function toolConcurrencyOf(value: number | undefined): number {
  if (value === undefined) return DEFAULT_TOOL_CONCURRENCY;
  if (!Number.isSafeInteger(value) || value < TOOL_CONCURRENCY_RANGE.min || value > TOOL_CONCURRENCY_RANGE.max) throw new ToolConcurrencyError(value);
  return value;
}

/**
 * Runs the turn's open calls until each is recorded (the turn's close comes next), one waits
 * for a decision, or a stop was asked for; returns the effect the last transition announced.
 */
export async function runOpenCalls(parts: SchedulerParts, turn: ToolTurn): Promise<AnnouncedEffect | null> {
  const queue = openCalls(turn.context());
  if (queue.length === 0) throw new Error('runPendingTools announced with no open call');
  const inFlight = new Map<string, Promise<void>>();
  let alone = false;
  let failure: { error: unknown } | null = null;
  let writes: Promise<unknown> = Promise.resolve();
  let effect: AnnouncedEffect | null = 'runPendingTools';
  let next = 0;

  const start = (call: PendingCall, runsAlone: boolean) => {
    const task = (async () => {
      const outcome = await turn.run(call);
      if (failure) return;
      // One writer: each record waits for the one before it, so appends go in completion order.
      const write = writes.then(async () => {
        if (failure) return;
        effect = await turn.record(call, outcome);
      });
      writes = write;
      await write;
    })()
      .catch((error: unknown) => {
        failure ??= { error };
      })
      .finally(() => {
        inFlight.delete(call.id);
        if (runsAlone) alone = false;
      });
    inFlight.set(call.id, task);
  };

  for (;;) {
    if (failure) throw (failure as { error: unknown }).error;
    const stop = next < queue.length && turn.stopAsked !== undefined && (await turn.stopAsked());
    while (!stop && next < queue.length && !alone && inFlight.size < parts.toolConcurrency && !parts.signal?.aborted) {
      const call = queue[next]!;
      const runsAlone = !mayOverlap(parts.registry, call);
      if (runsAlone && inFlight.size > 0) break;
      if (awaitsDecision(turn.context(), call)) return turn.waitFor(call);
      next += 1;
      alone = runsAlone;
      start(call, runsAlone);
    }
    if (inFlight.size === 0) return effect;
    await Promise.race(inFlight.values());
  }
}
