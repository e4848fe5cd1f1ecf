/**
 * A fleet run's result, for a caller that waits for it without polling. The database NOTIFYs
 * channel da_rest with the run's id whenever a run comes to rest (ended, waiting for a person,
 * stopped at a limit: a trigger of schema 7); awaitRun LISTENs before it reads the run, so that a
 * run coming to rest between the read and the wait cannot be missed. A re-read every few seconds
 * is only a safety net, for a notification lost with a connection that died without saying so.
 */
import { WAKE_DUE } from '../store/pg/pg-signal-inbox.ts';
import { AwaitRunTimeoutError, FleetRunMissingError, type FleetRunState } from './await-run-errors.ts';
import type { Notification, Pool, PoolClient } from 'pg';
import { type AgentStateName, isFinishedState, STOPPED_AT_LIMIT_STATES, type TokenUsage, ZERO_USAGE } from '../../machines/agent-loop.types.ts';
import { runResultOf } from '../runtime/run-result.ts';
import { foldJournal } from '../store/fold-journal.ts';
import { PgRunStore } from '../store/pg/pg-store.ts';

export const REST_CHANNEL = 'da_rest';

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
}

export interface AwaitRunOptions {
  /** Give up after this long (AwaitRunTimeoutError); the run goes on regardless. Default: wait as long as it takes. */
  timeoutMs?: number | undefined;
  /** Stops the wait (rejects with the signal's reason); the run goes on regardless. */
  signal?: AbortSignal | undefined;
  /** How often the run is re-read besides being woken by the database (a safety net); default 10 s. */
  recheckMs?: number | undefined;
}

/** Waits until the run rests, and returns its result; see the top of this file. */
export async function awaitRun(pool: Pool, runId: string, options: AwaitRunOptions = {}): Promise<FleetRunResult> {
  const { timeoutMs, signal } = options;
  const recheckMs = options.recheckMs ?? DEFAULT_RECHECK_MS;
  if (timeoutMs !== undefined && !(timeoutMs >= 0)) throw new RangeError(`awaitRun: timeoutMs is a number of milliseconds, 0 or more (got ${timeoutMs})`);
  if (!(recheckMs > 0)) throw new RangeError(`awaitRun: recheckMs is a number of milliseconds, more than 0 (got ${recheckMs})`);
  signal?.throwIfAborted();
  const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
  for (;;) {
    await untilRests(pool, runId, { deadline, timeoutMs: timeoutMs ?? Infinity, recheckMs, signal });
    const result = await readFleetRun(pool, runId);
    // Taken on between the two reads (a decision given at once): wait for its next rest.
    if (result.resting) return result;
  }
}

/** The run as it is now, at rest or not. */
export async function readFleetRun(pool: Pool, runId: string): Promise<FleetRunResult> {
  const store = new PgRunStore(pool, runId);
  for (;;) {
    const row = await readRow(pool, runId);
    if (!row) throw new FleetRunMissingError(runId);
    if (row.records === 0) {
      return { runId, state: row.state, finished: false, resting: false, text: null, usage: { ...ZERO_USAGE }, failure: null, waiting: [], turn: 0 };
    }
    const loaded = await store.load({ fromLastSnapshot: true });
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
    };
  }
}

interface RunRow {
  state: FleetRunState;
  records: number;
  /** A resting run that a worker will take on without anyone else acting: it is not at rest. */
  takenOn: boolean;
}

/**
 * What the claim query needs to take up a run that waits for a person or is stopped at a limit
 * (src/store/pg/leases.ts, WORKABLE), but a pause: a paused run goes on once unpaused, so a
 * caller waiting for its result waits on, as for a run paused in the middle of a turn. A wait
 * with a time (its own, or a timeout) is taken on too: its time comes without anyone acting.
 */
const TAKEN_ON = `CASE
    WHEN state = 'awaitingDecision' THEN
      EXISTS (SELECT 1 FROM da_decisions d WHERE d.run_id = da_runs.id AND d.tool_use_id = da_runs.awaiting AND d.settled_at IS NULL)
      OR coalesce(awaiting_since + (header #>> '{decisionPolicy,decisionTimeoutMs}')::bigint * interval '1 millisecond' <= now(), false)
      OR ${WAKE_DUE}
      OR EXISTS (SELECT 1 FROM da_waits w WHERE w.run_id = da_runs.id AND w.tool_use_id = da_runs.awaiting AND w.wake_at IS NOT NULL)
    WHEN state IN (${STOPPED_AT_LIMIT_STATES.map((state) => `'${state}'`).join(', ')}) THEN
      EXISTS (SELECT 1 FROM da_controls c WHERE c.run_id = da_runs.id AND c.kind = 'raise')
    ELSE false
  END`;

/** Marks the reads of a waiting connection, so that pg_stat_activity tells the sessions that wait for a run's rest. */
const WAITING_MARK = '/* awaitRun: LISTEN da_rest */ ';

async function readRow(db: Pick<Pool, 'query'>, runId: string, waiting = false): Promise<RunRow | null> {
  const { rows } = await db.query<{ state: FleetRunState; records: number; taken_on: boolean }>(
    `${waiting ? WAITING_MARK : ''}SELECT state, records, ${TAKEN_ON} AS taken_on FROM da_runs WHERE id = $1`,
    [runId],
  );
  const row = rows[0];
  return row ? { state: row.state, records: row.records, takenOn: row.taken_on } : null;
}

function rests(row: RunRow): boolean {
  return RESTING_STATES.includes(row.state as AgentStateName) && !row.takenOn;
}

interface WaitLimits {
  deadline: number;
  timeoutMs: number;
  recheckMs: number;
  signal: AbortSignal | undefined;
}

/** Returns once the run's row rests; the row is read on the listening connection, so a pool of one suffices. */
async function untilRests(pool: Pool, runId: string, limits: WaitLimits): Promise<void> {
  const listener = new RestListener(pool, runId);
  try {
    let retryMs = RETRY_FIRST_MS;
    for (;;) {
      limits.signal?.throwIfAborted();
      let row: RunRow | null;
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

/**
 * One connection of the pool, LISTENing on da_rest, woken by a notification for this run or by
 * the connection breaking (after which the next read connects and LISTENs again before reading).
 */
class RestListener {
  private client: PoolClient | null = null;
  /** Set by what should make the next wait return at once: it came while nobody waited. */
  private woken = false;
  private wake: (() => void) | null = null;
  private off: (() => void) | null = null;
  /** Whether a LISTEN ever succeeded: only after one is a lost connection retried. */
  listened = false;
  lastState: FleetRunState | null = null;

  constructor(
    private readonly pool: Pool,
    private readonly runId: string,
  ) {}

  /** LISTENs first if it does not, then reads the run's row. */
  async read(): Promise<RunRow | null> {
    const client = this.client ?? (await this.listen());
    // What woke us is answered by this read; whatever comes during it wakes the next wait.
    this.woken = false;
    const row = await readRow(client, this.runId, true);
    if (row) this.lastState = row.state;
    return row;
  }

  /** Until a notification for the run, a broken connection, `ms` or the signal. */
  next(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (this.woken) return Promise.resolve();
    return this.pause(ms, signal, true);
  }

  /** Until `ms` or the signal; with `wakeable`, until woken too. */
  pause(ms: number, signal: AbortSignal | undefined, wakeable = false): Promise<void> {
    // Aborted during a read: its abort event has passed already.
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const finish = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.wake = null;
      };
      const onAbort = () => {
        finish();
        reject(signal!.reason);
      };
      const timer = setTimeout(() => {
        finish();
        resolve();
      }, Math.max(0, ms));
      signal?.addEventListener('abort', onAbort, { once: true });
      if (wakeable) {
        this.wake = () => {
          finish();
          resolve();
        };
      }
    });
  }

  async close(): Promise<void> {
    const client = this.client;
    const off = this.off;
    this.client = null;
    this.off = null;
    if (!client) return;
    try {
      await client.query(`UNLISTEN ${REST_CHANNEL}`);
      off?.();
      client.release();
    } catch (error) {
      // Destroyed, not given back: a connection left listening would hear every run's rest.
      client.release(error instanceof Error ? error : true);
    }
  }

  private async listen(): Promise<PoolClient> {
    const client = await this.pool.connect();
    const onNotification = (message: Notification) => {
      if (message.channel === REST_CHANNEL && message.payload === this.runId) this.rouse();
    };
    // Stays on a connection that is destroyed: an error event without a listener would end the process.
    const onBroken = () => {
      if (this.client !== client) return;
      this.client = null;
      this.off = null;
      client.off('notification', onNotification);
      client.release(true);
      // A notification may have been lost with it: read again (connecting again) at once.
      this.rouse();
    };
    client.on('notification', onNotification);
    client.on('error', onBroken);
    client.on('end', onBroken);
    const off = () => {
      client.off('notification', onNotification);
      client.off('error', onBroken);
      client.off('end', onBroken);
    };
    try {
      await client.query(`LISTEN ${REST_CHANNEL}`);
    } catch (error) {
      client.off('notification', onNotification);
      client.release(true);
      throw error;
    }
    this.client = client;
    this.off = off;
    this.listened = true;
    return client;
  }

  private rouse(): void {
    this.woken = true;
    this.wake?.();
  }
}

export { AwaitRunTimeoutError, FleetRunMissingError } from './await-run-errors.ts';
