/**
 * Claim latency (issue 16): an idle worker LISTENs on da_work, and the database NOTIFYs it when
 * a run may have become claimable, whoever wrote it: a run queued, a lease on an unfinished run
 * released, a decision given, a pause cleared. Each worker here polls only once a minute, so a
 * claim within seconds is the notification's doing; a lease that runs out still waits for the poll.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { submitRuns } from '../../src/fleet/run-queue.ts';
import { scriptedDemoModel, Worker } from '../../src/fleet/worker.ts';
import { releaseLease } from '../../src/store/pg/leases.ts';
import { openDatabase, openPool } from '../../src/store/pg/pool.ts';
import { migrate } from '../../src/store/pg/schema.ts';
import { postgresAvailable, type PostgresServer, startPostgres } from '../helpers/postgres-server.ts';

let server: PostgresServer;
let admin: pg.Pool;
let databases = 0;
const SPEC = { kind: 'demo', model: null, maxTurns: 20, paceMs: 0, jitterMs: 0 } as const;

async function freshDatabase(): Promise<pg.Pool> {
  const name = `wake_${++databases}`;
  await admin.query(`CREATE DATABASE ${name}`);
  return openDatabase(server.url.replace(/\/postgres$/, `/${name}`), 8);
}

/** The database a pool of the worker's points at, seen from a connection of its own. */
function databaseOf(pool: pg.Pool): string {
  return (pool as unknown as { options: { connectionString: string } }).options.connectionString;
}

/** An idle worker that polls once a minute, and a way to see when it has started listening. */
function idleWorker(pool: pg.Pool): { worker: Worker; done: Promise<void>; lines: string[] } {
  const lines: string[] = [];
  const worker = new Worker({ pool, concurrency: 1, leaseMs: 60_000, exitWhenIdle: false, pollMs: 60_000, log: (line) => lines.push(line), modelFor: async (spec) => scriptedDemoModel(spec) });
  return { worker, done: worker.run(), lines };
}

async function stateOf(pool: pg.Pool, id: string): Promise<{ state: string; owner: string | null }> {
  const { rows } = await pool.query<{ state: string; owner: string | null }>('SELECT state, lease_owner AS owner FROM da_runs WHERE id = $1', [id]);
  return rows[0]!;
}

/** The worker polls only every 60 s: a run done within 10 s was woken by the notification. */
const WAKE_WITHIN_MS = 10_000;
const WOKEN = 'the run to be done within 10 s (the worker polls only every 60 s)';

/** The worker has made its first look (its claim found nothing): from now on it naps for a minute. */
async function settled(pool: pg.Pool): Promise<void> {
  // Not the worker's pool: a query of ours on the connection the claim used would hide it.
  const observer = openPool(databaseOf(pool), 1);
  try {
    await vi.waitFor(
      async () => {
        const { rows } = await observer.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'idle' AND query LIKE 'UPDATE da_runs SET lease_owner = $1%'`,
        );
        expect(rows[0]!.n, 'the worker’s first look').toBeGreaterThan(0);
      },
      { timeout: 10_000, interval: 20 },
    );
  } finally {
    await observer.end();
  }
}

describe.skipIf(!postgresAvailable())('idle workers wake on da_work notifications', () => {
  beforeAll(async () => {
    server = await startPostgres();
    admin = openPool(server.url, 2);
  }, 60_000);
  afterAll(async () => {
    await admin?.end();
    server?.stop();
  });

  it('a run submitted to an idle worker is claimed and done without waiting for the poll', async () => {
    const pool = await freshDatabase();
    const { worker, done } = idleWorker(pool);
    try {
      await settled(pool);
      const [id] = await submitRuns(pool, SPEC, 1);
      await vi.waitFor(async () => expect((await stateOf(pool, id!)).state, WOKEN).toBe('done'), { timeout: WAKE_WITHIN_MS, interval: 20 });
    } finally {
      worker.stop('test over');
      await done;
      await pool.end();
    }
  }, 60_000);

  it('a run whose lease is released unfinished is claimed at once by an idle worker', async () => {
    const pool = await freshDatabase();
    // Held by a worker that stops (as on SIGTERM): its lease runs for another minute unless released.
    const [id] = await submitRuns(pool, SPEC, 1);
    const { rows } = await pool.query<{ lease_epoch: string }>(
      `UPDATE da_runs SET lease_owner = 'stopping-worker', lease_epoch = lease_epoch + 1, lease_expires_at = now() + interval '1 minute' WHERE id = $1 RETURNING lease_epoch`,
      [id],
    );
    const { worker, done } = idleWorker(pool);
    try {
      await settled(pool);
      expect((await stateOf(pool, id!)).owner).toBe('stopping-worker');
      await releaseLease(pool, { runId: id!, owner: 'stopping-worker', epoch: Number(rows[0]!.lease_epoch) });
      await vi.waitFor(async () => expect((await stateOf(pool, id!)).state, WOKEN).toBe('done'), { timeout: WAKE_WITHIN_MS, interval: 20 });
    } finally {
      worker.stop('test over');
      await done;
      await pool.end();
    }
  }, 60_000);

  it('a paused run is taken up as soon as its pause is cleared', async () => {
    const pool = await freshDatabase();
    const [id] = await submitRuns(pool, SPEC, 1);
    await pool.query(`INSERT INTO da_controls (run_id, kind, request) VALUES ($1, 'pause', $2)`, [id, JSON.stringify({ kind: 'pause', by: 'ops', reason: null, at: 1 })]);
    const { worker, done } = idleWorker(pool);
    try {
      await settled(pool);
      expect((await stateOf(pool, id!)).state).toBe('queued');
      await pool.query(`DELETE FROM da_controls WHERE run_id = $1`, [id]);
      await vi.waitFor(async () => expect((await stateOf(pool, id!)).state, WOKEN).toBe('done'), { timeout: WAKE_WITHIN_MS, interval: 20 });
    } finally {
      worker.stop('test over');
      await done;
      await pool.end();
    }
  }, 60_000);

  it('migrates a schema at version 4 to 5 (the da_work notifications), once', async () => {
    const name = `wake_${++databases}`;
    await admin.query(`CREATE DATABASE ${name}`);
    const db = openPool(server.url.replace(/\/postgres$/, `/${name}`), 2);
    try {
      expect(await migrate(db, 4)).toEqual({ from: 0, to: 4 });
      expect(await migrate(db, 5)).toEqual({ from: 4, to: 5 });
      expect(await migrate(db, 5)).toEqual({ from: 5, to: 5 });
      const { rows } = await db.query<{ tgname: string }>(`SELECT tgname FROM pg_trigger WHERE tgname LIKE 'da\\_%' ORDER BY tgname`);
      expect(rows.map((r) => r.tgname)).toEqual(['da_controls_cleared', 'da_decisions_given', 'da_runs_queued', 'da_runs_released']);
    } finally {
      await db.end();
    }
  });
});
