/**
 * A worker lets go of a finished run's lease without holding the run's slot: the next run is
 * claimed and driven while the release is still on its way to the database, and the worker
 * stops only once every release has committed. Here the releases are held up by a lock the test
 * holds (a trigger on the release waits for it), so a worker that waited for its release before
 * taking the next run would never finish the second one.
 */
import { describe, expect, it, vi } from 'vitest';
import { submitRuns } from '../../src/fleet/run-queue.ts';
import { scriptedDemoModel, Worker } from '../../src/fleet/worker.ts';
import { openDatabase } from '../../src/store/pg/pool.ts';
import { freshDatabase, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';

const SPEC = { kind: 'demo', model: null, maxTurns: 20, paceMs: 0, jitterMs: 0 } as const;
const HOLD = 716_016;

describe.skipIf(!postgresAvailable())('a worker releasing leases', () => {
  usePostgres({ connections: 2 });

  it('takes the next run while a finished run’s release waits, and stops only once every release committed', async () => {
    const pool = await openDatabase(await freshDatabase('worker_release'), 8);
    const holder = await pool.connect();
    let running: Promise<unknown> = Promise.resolve();
    try {
      // Every release (lease_owner set to NULL) waits for the lock the test holds.
      await pool.query(`
        CREATE FUNCTION hold_release() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN PERFORM pg_advisory_xact_lock_shared(${HOLD}); RETURN NEW; END $$;
        CREATE TRIGGER hold_release BEFORE UPDATE OF lease_owner ON da_runs
          FOR EACH ROW WHEN (NEW.lease_owner IS NULL AND OLD.lease_owner IS NOT NULL) EXECUTE FUNCTION hold_release();`);
      await holder.query('SELECT pg_advisory_lock($1)', [HOLD]);
      const ids = await submitRuns(pool, SPEC, 3);
      const worker = new Worker({ pool, concurrency: 1, leaseMs: 60_000, exitWhenIdle: true, pollMs: 50, log: () => {}, modelFor: async (spec) => scriptedDemoModel(spec) });
      let stopped = false;
      running = worker.run().then(() => (stopped = true));
      const runs = () => pool.query<{ id: string; finished: boolean; lease_owner: string | null; lease_epoch: string }>('SELECT id, finished, lease_owner, lease_epoch FROM da_runs ORDER BY created_at, id');
      await vi.waitFor(async () => expect((await runs()).rows.every((row) => row.finished), 'all three runs finished on the one slot').toBe(true), { timeout: 30_000, interval: 20 });
      // Their releases still wait: the leases are held and the worker has not stopped.
      expect((await runs()).rows.map((row) => row.lease_owner)).toEqual([worker.id, worker.id, worker.id]);
      expect(stopped).toBe(false);
      await holder.query('SELECT pg_advisory_unlock($1)', [HOLD]);
      await running;
      const after = (await runs()).rows;
      expect(after.map((row) => row.id).sort()).toEqual([...ids].sort());
      expect(after.map((row) => [row.finished, row.lease_owner, Number(row.lease_epoch)])).toEqual([
        [true, null, 1],
        [true, null, 1],
        [true, null, 1],
      ]);
    } finally {
      await holder.query('SELECT pg_advisory_unlock_all()');
      holder.release();
      await running;
      await pool.end();
    }
  }, 120_000);
});
