/**
 * A run that an error stops each time a worker takes it up (here: the worker cannot make the
 * run's model, as one started without its API key) is left a while before it is taken up again,
 * longer after each failure in a row, instead of being claimed again at once in a loop; and once
 * the error is gone the run goes on and finishes.
 */
import { describe, expect, it } from 'vitest';
import { submitRuns } from '../../src/fleet/run-queue.ts';
import { scriptedDemoModel, Worker } from '../../src/fleet/worker.ts';
import { openDatabase } from '../../src/store/pg/pool.ts';
import { freshDatabase, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';

const SPEC = { kind: 'demo', model: null, maxTurns: 20, paceMs: 0, jitterMs: 0 } as const;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!postgresAvailable())('a worker and a run an error stops every time', () => {
  usePostgres({ connections: 2 });

  it('takes it up again after 1 s, then 2 s (not in a loop), and drives it to the end once the error is gone', async () => {
    const pool = await openDatabase(await freshDatabase('worker_backoff'), 4);
    const lines: string[] = [];
    let broken = true;
    const worker = new Worker({
      pool,
      runConcurrency: 1,
      leaseMs: 60_000,
      exitWhenIdle: false,
      pollIntervalMs: 20,
      log: (line) => lines.push(line),
      modelFor: async (spec) => {
        if (broken) throw new Error('the model cannot be made here (no API key)');
        return scriptedDemoModel(spec);
      },
    });
    const running = worker.run();
    try {
      const [id] = await submitRuns(pool, SPEC, 1);
      const epoch = async () => Number((await pool.query<{ lease_epoch: string }>('SELECT lease_epoch FROM da_runs WHERE id = $1', [id])).rows[0]!.lease_epoch);
      // Polling every 20 ms, a worker that took it up again at once would claim it ~100 times in 2.5 s.
      const started = Date.now();
      const failures = () => lines.filter((line) => line.includes('stopped by an error'));
      while (failures().length < 2) {
        if (Date.now() - started > 20_000) throw new Error(`the run was not taken up again:\n${lines.join('\n')}`);
        await sleep(20);
      }
      await sleep(Math.max(0, started + 2_500 - Date.now()));
      const claims = await epoch();
      expect(claims).toBeGreaterThanOrEqual(2);
      expect(claims).toBeLessThanOrEqual(3);
      expect(failures()[0]).toMatch(/failure 1 in a row; this worker takes it up again in 1 s/);
      expect(failures()[1]).toMatch(/failure 2 in a row; this worker takes it up again in 2 s/);
      broken = false;
      const deadline = Date.now() + 30_000;
      while (!(await pool.query<{ finished: boolean }>('SELECT finished FROM da_runs WHERE id = $1', [id])).rows[0]!.finished) {
        if (Date.now() > deadline) throw new Error(`the run did not finish once its model could be made:\n${lines.join('\n')}`);
        await sleep(50);
      }
      const { rows } = await pool.query<{ state: string }>('SELECT state FROM da_runs WHERE id = $1', [id]);
      expect(rows[0]!.state).toBe('done');
    } finally {
      worker.stop('the test is over');
      await running;
      await pool.end();
    }
  }, 60_000);
});
