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
  started: string;
  skipped: string;
  created_at: Date;
  updated_at: Date;
}

export type NewSchedule = Pick<ScheduleRow, 'name' | 'agent' | 'task' | 'cron' | 'timezone' | 'catch_up' | 'overlap' | 'run_options' | 'next_tick_at'>;

const COLUMNS = 'name, agent, task, cron, timezone, catch_up, overlap, run_options, paused, next_tick_at, last_tick_at, last_run_id, started, skipped, created_at, updated_at';

/** False when a schedule of that name exists already (nothing is written then). */
export async function insertSchedule(db: Database, schedule: NewSchedule): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO da_schedules (name, agent, task, cron, timezone, catch_up, overlap, run_options, next_tick_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9) ON CONFLICT (name) DO NOTHING`,
    [schedule.name, schedule.agent, schedule.task, schedule.cron, schedule.timezone, schedule.catch_up, schedule.overlap, JSON.stringify(schedule.run_options), schedule.next_tick_at],
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

/** The earliest tick of a schedule not paused, if any: how long a worker may sleep. */
export async function nextDueTick(db: Database): Promise<Date | null> {
  const { rows } = await db.query<{ next: Date | null }>('SELECT min(next_tick_at) AS next FROM da_schedules WHERE NOT paused');
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
  /** The due schedules no other firing holds, locked until the transaction ends. */
  readonly due: readonly ScheduleRow[];
  /** Whether a run is at rest: ended, or stopped at a limit until raised (null: no such run, e.g. pruned). */
  runAtRest(runId: string): Promise<boolean | null>;
  /** Queues a tick's run; false when a run of that id exists already. */
  queueRun(runId: string, spec: unknown): Promise<boolean>;
  record(firing: Firing): Promise<void>;
}

/** Takes up to `limit` due schedules and hands them to `body` in one transaction: committed when it returns. */
export function fireSchedules<T>(db: Database, limit: number, body: (firing: FiringTransaction) => Promise<T>): Promise<T> {
  return inTransaction(db, async (client) => {
    const now = await databaseNow(client);
    const { rows } = await client.query<ScheduleRow>(
      `SELECT ${COLUMNS} FROM da_schedules WHERE NOT paused AND next_tick_at <= $1 ORDER BY next_tick_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [now, limit],
    );
    return body({
      now,
      due: rows,
      runAtRest: async (runId) => {
        const found = await client.query<{ at_rest: boolean }>(`SELECT finished OR state IN (${STOPPED_AT_LIMIT}) AS at_rest FROM da_runs WHERE id = $1`, [runId]);
        return found.rows[0]?.at_rest ?? null;
      },
      queueRun: async (runId, spec) => {
        const queued = await client.query(`INSERT INTO da_runs (id, spec, created_at) VALUES ($1, $2::jsonb, clock_timestamp()) ON CONFLICT (id) DO NOTHING`, [runId, JSON.stringify(spec)]);
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
