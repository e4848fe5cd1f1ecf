/**
 * The crash suite's invariants on the PostgreSQL store: the shortest path to every state of the
 * machine (MAX_TURNS=2), crashed at every point, resumed from the database alone.
 */
import { describe, it } from 'vitest';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { pool, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';
import { Baselines, checkCrash, crashCases } from '../model-based/crash-check.ts';
import { generateCrashPaths } from '../model-based/crash-paths.ts';
import type { ScenarioStores } from '../model-based/scenario-runner.ts';

const { paths } = generateCrashPaths([['shortest', 2]]);
const cases = crashCases(paths);
console.log(`[crash suite, PostgreSQL] ${paths.length} shortest-path scenarios → ${cases.length} crash-and-resume tests`);

let runs = 0;
const freshRun = () => `crash-${++runs}`;
const stores: ScenarioStores = {
  name: 'PostgreSQL store',
  open: (runId, writeFaults) => new PgRunStore(pool, runId, { leaseMs: 60_000, ...(writeFaults ? { writeFaults } : {}) }),
  close: () => {},
};
const baselines = new Baselines(stores, freshRun);

describe.skipIf(!postgresAvailable())('crash anywhere, resume, finish — on PostgreSQL', () => {
  usePostgres({ connections: 20 });

  it.concurrent.each(cases)('$name', async (crash) => {
    await checkCrash(crash, stores, baselines, freshRun());
  });
});
