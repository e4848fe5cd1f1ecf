/**
 * The crash suite of awaits on the PostgreSQL store: every kind of await (walks/await-kinds.ts),
 * killed at every crash point of its path, decided from outside through the database (the
 * da_decisions inbox, the signals' table, the clock), resumed from the database alone, and held
 * to the same invariants as on the file store (await-check.ts).
 */
import { describe } from 'vitest';
import { pgScenarioStores } from '../helpers/pg-scenario-stores.ts';
import { postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';
import { AwaitBaselines } from '../model-based/await-check.ts';
import { AWAIT_CASES, AWAIT_PATHS, casesPerKind, defineAwaitCrashTests } from '../model-based/await-suite.ts';

console.log(`[crash suite of awaits, PostgreSQL] ${AWAIT_PATHS.length} kinds → ${AWAIT_CASES.length} crash-and-resume tests (${casesPerKind()})`);

let runs = 0;
const freshRun = () => `await-${++runs}`;
const stores = pgScenarioStores();

describe.skipIf(!postgresAvailable())('crash anywhere in an await, resume, finish — on PostgreSQL', () => {
  usePostgres({ connections: 20 });
  defineAwaitCrashTests(stores, new AwaitBaselines(stores, freshRun), freshRun);
});
