/**
 * A fleet run's result, for a caller that waits for it without polling. The database NOTIFYs
 * channel da_rest with the run's id whenever a run comes to rest (ended, waiting for a person,
 * stopped at a limit: a trigger of schema 7); awaitRun LISTENs before it reads the run, so that a
 * run coming to rest between the read and the wait cannot be missed. A re-read every few seconds
 * is only a safety net, for a notification lost with a connection that died without saying so.
 */
import { AwaitRunTimeoutError, FleetRunMissingError, type FleetRunState } from './await-run-errors.ts';
import { type AgentStateName, type BudgetStop, isFinishedState, type TokenUsage, ZERO_USAGE } from '../../machines/agent-loop.types.ts';
import { runResultOf } from '../runtime/run-result.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import type { Database } from '../store/pg/pool.ts';
import { RestListener } from '../store/pg/rest-listener.ts';
import { readRestRow, type RestRow } from '../store/pg/run-rest.ts';
import type { KeysGiven } from '../seal/keys.ts';
import { openDatabaseStore } from '../store/pg/open-database-store.ts';

export { REST_CHANNEL } from '../store/pg/run-rest.ts';

/** The states the trigger of schema 7 notifies: nothing happens in them until someone acts, or never again. */
export const RESTING_STATES: readonly AgentStateName[] = ['done', 'failed', 'cancelled', 'awaitingDecision', 'stoppedAtMaxTurns', 'stoppedAtBudget'];

/** How often a wait re-reads the run besides being woken (see the top of this file). */
export const DEFAULT_RECHECK_MS = 10_000;

export type { FleetRunState } from './await-run-errors.ts';

export interface FleetRunResult {
  runId: string;
  state: FleetRunState;
  /** Ended: done, failed or cancelled. A run stopped at a limit or waiting for a person has not. */
  finished: boolean;
  /**
   * At rest: ended, waiting for a person, or stopped at a limit, with nothing given yet that takes
   * it on (a decision for the call it waits on, its decision deadline passed, a raise). Always
   * true for what awaitRun returns.
   */
  resting: boolean;
  /** The model's final answer, when done. */
  text: string | null;
  /** The tokens the run used, all its model calls together. */
  usage: TokenUsage;
  /** What the run failed of, when failed. */
  failure: string | null;
  /** The ids of the calls that wait for a person's decision (state awaitingDecision); else empty. */
  waiting: string[];
  turn: number;
  /** Which budget or tenant quota stopped the run (state stoppedAtBudget), with the figures; absent otherwise. */
  budgetStop?: BudgetStop | undefined;
  /** The run is sealed (its journal's header names its run key): its text is its content, sealed unless opened with the key. */
  sealed: boolean;
}

export interface AwaitRunOptions {
  /** Give up after this long (AwaitRunTimeoutError); the run goes on regardless. Default: wait as long as it takes. */
  timeoutMs?: number | undefined;
  /** Stops the wait (rejects with the signal's reason); the run goes on regardless. */
  signal?: AbortSignal | undefined;
  /** How often the run is re-read besides being woken by the database (a safety net); default 10 s. */
  recheckMs?: number | undefined;
  /** The master keys a sealed run's answer opens with; without them a sealed answer stays sealed (a `sealed:1:…` string). */
  keys?: KeysGiven | undefined;
}

/** Waits until the run rests, and returns its result; see the top of this file. */
export async function awaitRun(pool: Database, runId: string, options: AwaitRunOptions = {}): Promise<FleetRunResult> {
  const { timeoutMs, signal } = options;
  const recheckMs = options.recheckMs ?? DEFAULT_RECHECK_MS;
  if (timeoutMs !== undefined && !(timeoutMs >= 0)) throw new RangeError(`awaitRun: timeoutMs is a number of milliseconds, 0 or more (got ${timeoutMs})`);
  if (!(recheckMs > 0)) throw new RangeError(`awaitRun: recheckMs is a number of milliseconds, more than 0 (got ${recheckMs})`);
  signal?.throwIfAborted();
  const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
  for (;;) {
    await untilRests(pool, runId, { deadline, timeoutMs: timeoutMs ?? Infinity, recheckMs, signal });
    const result = await readFleetRun(pool, runId, options.keys);
    // Taken on between the two reads (a decision given at once): wait for its next rest.
    if (result.resting) return result;
  }
}

/** The run as it is now, at rest or not. */
export async function readFleetRun(pool: Database, runId: string, keys?: KeysGiven): Promise<FleetRunResult> {
  const store = openDatabaseStore(pool, runId, { keys });
  for (;;) {
    const row = await readRestRow(pool, runId);
    if (!row) throw new FleetRunMissingError(runId);
    if (row.records === 0) {
      return { runId, state: row.state, finished: false, resting: false, text: null, usage: { ...ZERO_USAGE }, failure: null, waiting: [], turn: 0, sealed: false };
    }
    const loaded = await store.load({ fromLastSnapshot: true });
    // Keys given ask for the answer: a sealed run they do not open (a shredded one, another key's) is refused, not shown sealed.
    if (loaded.contentRefused && (await keysAtHand(keys))) throw loaded.contentRefused;
    const { state, context } = foldJournal(store.location, loaded);
    // Whether something takes a resting run on was read with the row: only as true as the row is
    // the journal's end. A run at rest is written only once taken on, so this retries rarely.
    const current = loaded.records.at(-1)!.record.seq + 1 === row.records;
    if (RESTING_STATES.includes(state) && !current) continue;
    const run = runResultOf(runId, state, context);
    return {
      runId,
      state,
      finished: isFinishedState(state),
      resting: RESTING_STATES.includes(state) && !row.takenOn,
      text: run.text,
      usage: { ...run.usage },
      failure: run.failure?.message ?? null,
      waiting: (run.waiting ?? []).map((call) => call.tool_use_id),
      turn: run.turn,
      ...(state === 'stoppedAtBudget' && context.budgetStop ? { budgetStop: context.budgetStop } : {}),
      sealed: loaded.header.sealed !== undefined,
    };
  }
}

/** Whether master keys were given (a function that reads them may find none). */
async function keysAtHand(keys: KeysGiven | undefined): Promise<boolean> {
  if (keys === undefined) return false;
  return typeof keys !== 'function' || (await keys()) !== null;
}

function rests(row: RestRow): boolean {
  return RESTING_STATES.includes(row.state as AgentStateName) && !row.takenOn;
}

interface WaitLimits {
  deadline: number;
  timeoutMs: number;
  recheckMs: number;
  signal: AbortSignal | undefined;
}

/** Returns once the run's row rests; the row is read on the listening connection, so a pool of one suffices. */
async function untilRests(pool: Database, runId: string, limits: WaitLimits): Promise<void> {
  const listener = new RestListener(pool, runId);
  try {
    let retryMs = RETRY_FIRST_MS;
    for (;;) {
      limits.signal?.throwIfAborted();
      let row: RestRow | null;
      try {
        row = await listener.read();
        retryMs = RETRY_FIRST_MS;
      } catch (error) {
        // The first connection failing is the caller's to hear of; a later one, lost, is retried.
        if (!listener.listened || !isConnectionLoss(error)) throw error;
        await listener.pause(Math.min(retryMs, limits.deadline - Date.now()), limits.signal);
        retryMs = Math.min(retryMs * 2, limits.recheckMs);
        if (Date.now() >= limits.deadline) throw new AwaitRunTimeoutError(runId, limits.timeoutMs, listener.lastState);
        continue;
      }
      if (!row) throw new FleetRunMissingError(runId);
      if (rests(row)) return;
      const left = limits.deadline - Date.now();
      if (left <= 0) throw new AwaitRunTimeoutError(runId, limits.timeoutMs, row.state);
      await listener.next(Math.min(left, limits.recheckMs), limits.signal);
    }
  } finally {
    await listener.close();
  }
}

const RETRY_FIRST_MS = 250;

/** A connection that broke or a server that went away (SQLSTATE classes 08 and 57P), not a refused statement. */
function isConnectionLoss(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true;
  return code.startsWith('08') || code.startsWith('57P');
}

export { AwaitRunTimeoutError, FleetRunMissingError } from './await-run-errors.ts';
