/**
 * The crash suites' store on PostgreSQL, plain or sealed: one run per key (a run id) in the test file's cluster
 * (use-postgres.ts; `pool` is read when a store is opened, once the cluster runs).
 */
import type { Decision } from '../../machines/agent-loop.types.ts';
import type { MasterKeys } from '../../src/seal/keys.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import type { ScenarioStores } from '../model-based/scenario-runner.ts';
import { pool } from './use-postgres.ts';

/** `keys`: every run started sealed with them (and resumed with them). */
export function pgScenarioStores(keys?: MasterKeys): ScenarioStores {
  return {
    name: keys ? 'sealed PostgreSQL store' : 'PostgreSQL store',
    open: (runId, writeFaults) => new PgRunStore(pool, runId, { leaseMs: 60_000, ...(writeFaults ? { writeFaults } : {}), ...(keys ? { keys } : {}) }),
    close: () => {},
    // A fresh start moves the run's row aside under an archived id; its decisions follow it (ON UPDATE CASCADE).
    archivedDecisions: async (runId) =>
      (await pool.query<{ decision: Decision }>(`SELECT decision FROM da_decisions WHERE starts_with(run_id, $1)`, [`${runId}~archived~`])).rows.map((row) => row.decision),
  };
}
