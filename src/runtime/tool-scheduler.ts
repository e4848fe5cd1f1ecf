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
 * - Group commit: outcomes that come back while the writer waits for the disk are written
 *   together by its next write, each still its own transition and record, with one fsync for all.
 *   While other calls are in flight the writer waits for the disk without blocking, so that their
 *   outcomes can gather meanwhile.
 *
 * The turn's calls are run by this rule (tool-turn.ts), and a resume settles the open calls of a
 * turn by it too (reconcile-turn.ts):
 * read-only re-runs side by side, anything with a side effect alone and in the model's order.
 *
 * If a record fails (a crash point, a lost lock), nothing more of the turn is recorded and the
 * error goes up once the write under way has ended: the calls still in flight are left to
 * finish unrecorded, as a killed process would leave them, and a resume reconciles them like any
 * open call.
 */
import type { AnnouncedEffect } from '../../machines/agent-loop.effects.ts';
import type { PendingCall, ToolOutcome } from '../../machines/agent-loop.types.ts';
import type { RecordNote } from '../store/journal/journal-record.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';
import { readOnlyFor } from '../tools/tool.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

export const DEFAULT_TOOL_CONCURRENCY = 4;
export const TOOL_CONCURRENCY_RANGE = { min: 1, max: 64 } as const;

/** A call's outcome, ready for the ledger; a resume notes which rule settled it. */
export interface Finished {
  readonly call: PendingCall;
  readonly outcome: ToolOutcome;
  readonly note?: RecordNote | undefined;
}

/**
 * Records outcomes that finished together, in the order given, as one write (one fsync); each is
 * its own transition and record. `othersRunning`: other calls of the turn are in flight (the
 * write then waits for the disk without blocking). Resolves to the effect the last transition announced.
 */
export type RecordGroup = (group: readonly Finished[], othersRunning: boolean) => Promise<AnnouncedEffect | null>;

/** The call may run beside other calls of its turn. An unknown tool is rejected without running. */
export function mayOverlap(registry: ToolRegistry, call: PendingCall): boolean {
  if (call.needs !== undefined) return false;
  const tool = registry.get(call.name);
  return !tool || readOnlyFor(tool, call.input) || tool.concurrencySafe === true;
}

export class ToolConcurrencyError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
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

/** One call to settle: whether it may run beside others, and how to get its outcome (null: nothing to record). */
export interface Job {
  readonly call: PendingCall;
  readonly overlaps: boolean;
  finish(): Promise<Finished | null>;
}

export interface OrderRules {
  /** At most this many jobs in flight. */
  readonly limit: number;
  readonly signal?: AbortSignal | undefined;
  readonly record: RecordGroup;
  /** Asked before jobs are started: true starts nothing more. */
  readonly stopAsked?: (() => Promise<boolean>) | undefined;
  /** A job that runs alone, reached with nothing in flight: what to do instead of starting it (null: start it). */
  readonly instead?: ((job: Job) => Promise<AnnouncedEffect | null> | null) | undefined;
}

/**
 * The scheduler's rule (see the top of this file) for any list of jobs in the model's order;
 * returns the effect the last record announced (`initial` when nothing was recorded).
 */
export function runInOrder(jobs: readonly Job[], rules: OrderRules, initial: AnnouncedEffect | null): Promise<AnnouncedEffect | null> {
  return jobs.length === 1 ? runAlone(jobs[0]!, rules, initial) : runSeveral(jobs, rules, initial);
}

async function runSeveral(jobs: readonly Job[], rules: OrderRules, initial: AnnouncedEffect | null): Promise<AnnouncedEffect | null> {
  const inFlight = new Map<Job, Promise<void>>();
  const writer = new GroupWriter((group) => rules.record(group, inFlight.size > group.length), initial);
  let alone = false;
  let failure: { error: unknown } | null = null;
  let next = 0;

  for (;;) {
    if (failure) {
      // The write under way ends first: the store is never closed under a write waiting for the disk.
      await writer.idle();
      throw (failure as { error: unknown }).error;
    }
    const stop = next < jobs.length && rules.stopAsked !== undefined && (await rules.stopAsked());
    while (!stop && next < jobs.length && !alone && inFlight.size < rules.limit && !rules.signal?.aborted) {
      const job = jobs[next]!;
      if (!job.overlaps && inFlight.size > 0) break;
      const instead = rules.instead?.(job);
      if (instead) return instead;
      next += 1;
      alone = !job.overlaps;
      // Started here rather than by a `start` arrow: a build that keeps function names (tsx) names such an arrow at every turn.
      const task = (async () => {
        const finished = await job.finish();
        if (failure || !finished) return;
        await writer.write(finished);
      })()
        .catch((error: unknown) => {
          failure ??= { error };
          writer.fail(error);
        })
        .finally(() => {
          inFlight.delete(job);
          if (!job.overlaps) alone = false;
        });
      inFlight.set(job, task);
    }
    if (inFlight.size === 0) return writer.effect;
    await Promise.race(inFlight.values());
  }
}

/**
 * The rule for a turn of one call (most turns), written out: nothing can run beside it nor finish
 * while its outcome is written, so there is nothing to gather, race or queue (the general loop's
 * map, writer, race and promises cost a turn of the in-memory loop about a twentieth of its allocations).
 */
async function runAlone(job: Job, rules: OrderRules, initial: AnnouncedEffect | null): Promise<AnnouncedEffect | null> {
  if (rules.stopAsked !== undefined && (await rules.stopAsked())) return initial;
  if (rules.signal?.aborted) return initial;
  const instead = rules.instead?.(job);
  if (instead) return instead;
  const finished = await job.finish();
  return finished ? rules.record([finished], false) : initial;
}

/**
 * The one writer of a turn's outcomes: a write at a time, in completion order; what arrives
 * while one is under way is written together by the next (group commit). A failed write fails
 * what waits behind it too: nothing more of the turn is recorded.
 */
class GroupWriter {
  private queue: Array<{ finished: Finished; resolve: () => void; reject: (error: unknown) => void }> = [];
  private writing: Promise<void> | null = null;
  private failed: { error: unknown } | null = null;

  constructor(
    private readonly record: (group: readonly Finished[]) => Promise<AnnouncedEffect | null>,
    public effect: AnnouncedEffect | null,
  ) {}

  /** Resolves once the outcome is recorded. */
  write(finished: Finished): Promise<void> {
    if (this.failed) return Promise.reject(this.failed.error);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ finished, resolve, reject });
      this.writing ??= this.drain();
    });
  }

  /** Writes nothing more (the write under way ends): what waits, or comes later, fails with `error`. */
  fail(error: unknown): void {
    this.failed ??= { error };
  }

  /** Resolves once no write is under way. */
  idle(): Promise<void> {
    return this.writing ?? Promise.resolve();
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const group = this.queue.splice(0);
        if (this.failed) {
          for (const entry of group) entry.reject(this.failed.error);
          continue;
        }
        try {
          this.effect = await this.record(group.map((entry) => entry.finished));
          for (const entry of group) entry.resolve();
        } catch (error) {
          this.fail(error);
          for (const entry of group) entry.reject(error);
        }
      }
    } finally {
      this.writing = null;
    }
  }
}
