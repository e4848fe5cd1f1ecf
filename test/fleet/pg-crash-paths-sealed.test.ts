/**
 * The crash suite on the PostgreSQL store with every run sealed: each crash point of every
 * scenario of the shortest walk to every state of the machine (MAX_TURNS=2) and of the walk after
 * another run (a decision of another run in da_decisions, sealed), one path per scenario, crashed
 * there, resumed from the database alone (with the key) and run to the end; nothing lost, nothing
 * done twice, every tool_use with its tool_result, and no record of the run holding its content
 * readable. The plain PostgreSQL suite (pg-crash-paths) adds the budget and compaction walks, and
 * the sealed file suite (crash-paths-sealed) every walk.
 *
 * One cluster for the file, its schema migrated once, one pool; each case a run of its own id, so
 * no case reads another's rows. The cluster's commits do not wait for the disk: the crashes here
 * are the client's, never the server's (see startPostgres).
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KeyRing } from '../../src/seal/keys.ts';
import { pgScenarioStores } from '../helpers/pg-scenario-stores.ts';
import { pool, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';
import { Baselines, checkCrash, crashCases } from '../model-based/crash-check.ts';
import { type CrashPath, generateCrashPaths } from '../model-based/crash-paths.ts';

/** One path per scenario (the longest stands for its prefixes), numbered anew. */
function suitePaths(): CrashPath[] {
  const byScenario = new Map<string, CrashPath>();
  for (const path of generateCrashPaths([['shortest', 2], ['simple', 1, 1, 'after-another-run']]).paths) {
    const known = byScenario.get(path.scenarioKey);
    if (!known || known.steps.length < path.steps.length) byScenario.set(path.scenarioKey, path);
  }
  return [...byScenario.values()].map((path, index) => ({ ...path, id: index + 1 }));
}

const paths = suitePaths();
const cases = crashCases(paths);
console.log(
  `[crash suite, sealed PostgreSQL] ${paths.length} scenarios (shortest paths, MAX_TURNS=2; after another run: ` +
    `${paths.filter((p) => p.scenario.anotherRunFirst).length}) → ${cases.length} crash-and-resume tests`,
);

let runs = 0;
const freshRun = () => `sealed-crash-${++runs}`;
const stores = pgScenarioStores(KeyRing.of([{ id: 'suite', key: randomBytes(32) }]));
const baselines = new Baselines(stores, freshRun);

/** The run sealed: its header names its run key, its row keeps the key wrapped, and every record is sealed, its task too. */
async function expectSealed(runId: string): Promise<void> {
  const { rows } = await pool.query<{ header: { sealed?: string } | null; run_key: unknown }>('SELECT header, run_key FROM da_runs WHERE id = $1', [runId]);
  if (!rows[0]?.header) return;
  expect(rows[0].header.sealed).toMatch(/^rk-/);
  expect(rows[0].run_key).toMatchObject({ master: 'suite' });
  const records = await pool.query<{ body: string }>('SELECT body FROM da_records WHERE run_id = $1', [runId]);
  for (const { body } of records.rows) {
    const record = JSON.parse(body) as { sealed?: string; task?: unknown };
    expect(record.sealed).toMatch(/^rk-/);
    if (record.task !== undefined) expect(record.task).toMatch(/^sealed:1:rk-/);
  }
}

describe.skipIf(!postgresAvailable())('crash anywhere in a sealed run, resume with its key, finish — on PostgreSQL', () => {
  usePostgres({ connections: 20, durableCommits: false });

  it.concurrent.each(cases)('$name', async (crash) => {
    const runId = freshRun();
    await checkCrash(crash, stores, baselines, runId);
    await expectSealed(runId);
  });
});
