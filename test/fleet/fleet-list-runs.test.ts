/**
 * listRuns over a fleet's database: the same RunSummary a folder's runs are listed as, with the
 * queue's row beside it; a state filter as list --state gives it.
 */
import { describe, expect, it } from 'vitest';
import { DEMO_TASK } from '../../src/demo/demo-task.ts';
import { scriptedDemoModel, Worker } from '../../src/fleet/worker.ts';
import { listRuns, submitRuns } from '../../src/postgres.ts';
import { openDatabase } from '../../src/store/pg/pool.ts';
import { freshDatabase, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';

const SPEC = { kind: 'demo', model: null, maxTurns: 20, paceMs: 0, jitterMs: 0 } as const;

describe.skipIf(!postgresAvailable())('listRuns over a fleet', () => {
  usePostgres({ connections: 2 });

  it('lists each run as its summary, queued and done alike, and filters by state', async () => {
    const pool = await openDatabase(await freshDatabase('list_runs'), 4);
    try {
      const [first] = await submitRuns(pool, SPEC, 1);
      const queued = await listRuns(pool);
      expect(queued).toHaveLength(1);
      expect(queued[0]).toMatchObject({ runId: first, source: 'fleet', category: 'running', task: DEMO_TASK, turn: 0, maxTurns: 20, usage: null, archived: false, problem: null, children: 0 });
      expect(queued[0]!.fleet).toMatchObject({ id: first, finished: false });

      await new Worker({ pool, concurrency: 1, leaseMs: 60_000, exitWhenIdle: true, pollMs: 50, log: () => {}, modelFor: async (spec) => scriptedDemoModel(spec) }).run();
      const [done] = await listRuns(pool, { states: ['done'] });
      expect(done).toMatchObject({ runId: first, state: 'done', category: 'done', waitsFor: null, waitingOn: null });
      expect(done!.tokens).toBeGreaterThan(0);
      expect(await listRuns(pool, { states: ['failed'] })).toEqual([]);
    } finally {
      await pool.end();
    }
  });
});
