/**
 * The schedules in da_schedules: adding, reading, pausing and removing them, and the statements of
 * a firing (src/fleet/schedules.ts says what a firing does). A firing takes its due schedules
 * FOR UPDATE SKIP LOCKED and moves each one's next tick on in the transaction that queues the
 * tick's runs: two workers firing at once never take the same schedule, and a worker killed
 * mid-way leaves the schedule as it was.
 */
import type { PoolClient } from 'pg';
import { STOPPED_AT_LIMIT } from './leases.ts';
import type { Database } from './pool.ts';
import { inTransaction } from './transaction.ts';

/** A schedule as stored. */
export interface ScheduleRow {
  name: string;
  agent: string;
  task: string;
  cron: string;
  timezone: string;
  catch_up: number;
  overlap: boolean;
  run_options: Record<string, unknown>;
  paused: boolean;
  /** Null once the expression never ticks again. */
  next_tick_at: Date | null;
  last_tick_at: Date | null;
  last_run_id: string | null;
  /** The wrapped key its task is sealed with (a schedule added with keys), else null: the task is plain. */
  task_key: unknown;
  started: string;
  skipped: string;
  created_at: Date;
  updated_at: Date;
}

export type NewSchedule = Pick<ScheduleRow, 'name' | 'agent' | 'task' | 'cron' | 'timezone' | 'catch_up' | 'overlap' | 'run_options' | 'next_tick_at' | 'task_key'>;

const COLUMNS = 'name, agent, task, cron, timezone, catch_up, overlap, run_options, paused, next_tick_at, last_tick_at, last_run_id, task_key, started, skipped, created_at, updated_at';

/** False when a schedule of that name exists already (nothing is written then). */
export async function insertSchedule(db: Database, schedule: NewSchedule): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO da_schedules (name, agent, task, cron, timezone, catch_up, overlap, run_options, next_tick_at, task_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10::jsonb) ON CONFLICT (name) DO NOTHING`,
    [
      schedule.name,
      schedule.agent,
      schedule.task,
      schedule.cron,
      schedule.timezone,
      schedule.catch_up,
      schedule.overlap,
      JSON.stringify(schedule.run_options),
      schedule.next_tick_at,
      schedule.task_key === null ? null : JSON.stringify(schedule.task_key),
    ],
  );
  return rowCount === 1;
}

export async function readSchedule(db: Database, name: string): Promise<ScheduleRow | undefined> {
  const { rows } = await db.query<ScheduleRow>(`SELECT ${COLUMNS} FROM da_schedules WHERE name = $1`, [name]);
  return rows[0];
}

/** Every schedule, by name. */
export async function readSchedules(db: Database): Promise<ScheduleRow[]> {
  const { rows } = await db.query<ScheduleRow>(`SELECT ${COLUMNS} FROM da_schedules ORDER BY name`);
  return rows;
}

/** The database's clock: what is due is decided by it, whatever the workers' clocks say. */
export async function databaseNow(db: Database | PoolClient): Promise<Date> {
  const { rows } = await db.query<{ now: Date }>('SELECT clock_timestamp() AS now');
  return rows[0]!.now;
}

/** Pauses a schedule, or resumes it with the tick it goes on from; false when there is no such schedule. */
export async function setSchedulePaused(db: Database, name: string, paused: boolean, nextTickAt: Date | null): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE da_schedules SET paused = $2, next_tick_at = CASE WHEN $2 THEN next_tick_at ELSE $3 END, updated_at = now() WHERE name = $1`,
    [name, paused, nextTickAt],
  );
  return rowCount === 1;
}

/** False when there is no such schedule. The runs it started stay. */
export async function deleteSchedule(db: Database, name: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM da_schedules WHERE name = $1', [name]);
  return rowCount === 1;
}

/** The earliest tick of a schedule not paused nor in `except`, if any: how long a worker may sleep. */
export async function nextDueTick(db: Database, except: readonly string[] = []): Promise<Date | null> {
  const { rows } = await db.query<{ next: Date | null }>('SELECT min(next_tick_at) AS next FROM da_schedules WHERE NOT paused AND NOT (name = ANY($1::text[]))', [except]);
  return rows[0]?.next ?? null;
}

/** What one firing of a schedule writes: its next tick, and what it started and skipped. */
export interface Firing {
  name: string;
  nextTickAt: Date | null;
  lastTickAt: Date | null;
  lastRunId: string | null;
  started: number;
  skipped: number;
}

/** The statements of one firing, on the firing's transaction. */
export interface FiringTransaction {
  /** The database's clock at the start of the firing. */
  readonly now: Date;
  /**
   * Up to `limit` more due schedules no other firing holds and this one may fire (see
   * SealedSchedules), but those named in `passed`, locked until the transaction ends.
   */
  take(limit: number, passed: readonly string[]): Promise<ScheduleRow[]>;
  /** The due schedules left alone because their task is sealed under a master key not among those this firing holds. */
  readonly leftSealed: ReadonlyArray<{ name: string; master: string | null }>;
  /** Whether a run is at rest: ended, or stopped at a limit until raised (null: no such run, e.g. pruned). */
  runAtRest(runId: string): Promise<boolean | null>;
  /** Queues a tick's run (with its wrapped run key when its task is sealed); false when a run of that id exists already. */
  queueRun(runId: string, spec: unknown, runKey?: unknown): Promise<boolean>;
  record(firing: Firing): Promise<void>;
}

/**
 * Which sealed schedules a firing takes: those whose key is wrapped under one of these master
 * key ids, or any (`any`: a keys hook, which may open any of them). A plain one is always taken.
 */
export interface SealedSchedules {
  any: boolean;
  masters: readonly string[];
}

/**
 * Hands `body` the firing's transaction, in which it takes due schedules: committed when it
 * returns. A sealed schedule under a ring key the firing is not given is not taken (not even
 * locked): its tick waits for a firing that holds its key. One a hook may open is taken, and
 * `body` passes it over in its next take when the hook cannot open it.
 */
export function fireSchedules<T>(db: Database, sealed: SealedSchedules, body: (firing: FiringTransaction) => Promise<T>): Promise<T> {
  return inTransaction(db, async (client) => {
    const now = await databaseNow(client);
    const left = sealed.any
      ? { rows: [] }
      : await client.query<{ name: string; master: string | null }>(
          `SELECT name, task_key ->> 'master' AS master FROM da_schedules
            WHERE NOT paused AND next_tick_at <= $1 AND task_key IS NOT NULL AND NOT (coalesce(task_key ->> 'master', '') = ANY($2::text[]))
            ORDER BY name`,
          [now, sealed.masters],
        );
    return body({
      now,
      take: async (limit, passed) => {
        const { rows } = await client.query<ScheduleRow>(
          `SELECT ${COLUMNS} FROM da_schedules
            WHERE NOT paused AND next_tick_at <= $1 AND (task_key IS NULL OR $3 OR task_key ->> 'master' = ANY($4::text[])) AND NOT (name = ANY($5::text[]))
            ORDER BY next_tick_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
          [now, limit, sealed.any, sealed.masters, passed],
        );
        return rows;
      },
      leftSealed: left.rows,
      runAtRest: async (runId) => {
        const found = await client.query<{ at_rest: boolean }>(`SELECT finished OR state IN (${STOPPED_AT_LIMIT}) AS at_rest FROM da_runs WHERE id = $1`, [runId]);
        return found.rows[0]?.at_rest ?? null;
      },
      queueRun: async (runId, spec, runKey = null) => {
        const queued = await client.query(`INSERT INTO da_runs (id, spec, run_key, created_at) VALUES ($1, $2::jsonb, $3::jsonb, clock_timestamp()) ON CONFLICT (id) DO NOTHING`, [
          runId,
          JSON.stringify(spec),
          runKey === null ? null : JSON.stringify(runKey),
        ]);
        return queued.rowCount === 1;
      },
      record: async (firing) => {
        await client.query(
          `UPDATE da_schedules SET next_tick_at = $2, last_tick_at = coalesce($3, last_tick_at), last_run_id = coalesce($4, last_run_id),
                  started = started + $5, skipped = skipped + $6, updated_at = now()
            WHERE name = $1`,
          [firing.name, firing.nextTickAt, firing.lastTickAt, firing.lastRunId, firing.started, firing.skipped],
        );
      },
    });
  });
}

/** The wrapped keys of the sealed schedules, by name: what a rotation wraps again. */
export async function readScheduleKeys(db: Database): Promise<Array<{ name: string; task_key: unknown }>> {
  const { rows } = await db.query<{ name: string; task_key: unknown }>('SELECT name, task_key FROM da_schedules WHERE task_key IS NOT NULL ORDER BY name');
  return rows;
}

/** Replaces a schedule's wrapped key where it is still the one read (a schedule removed meanwhile stays removed); false when it was not. */
export async function replaceScheduleKey(db: Database, name: string, before: unknown, after: unknown): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE da_schedules SET task_key = $3::jsonb, updated_at = now() WHERE name = $1 AND task_key = $2::jsonb', [name, JSON.stringify(before), JSON.stringify(after)]);
  return rowCount === 1;
}
