/**
 * The crash suite on the PostgreSQL store with every run sealed: each crash point of a sample of
 * paths, crashed there, resumed from the database alone (with the key) and run to the end;
 * nothing lost, nothing done twice, every tool_use with its tool_result, and no record of the run
 * holding its content readable. A sample, to keep the suite's time (about a third of the plain
 * PostgreSQL suite's): one path per scenario, a quarter of the scenarios of the shortest walk to
 * every state of the machine (MAX_TURNS=2), and every scenario of the walk after another run (a
 * decision of another run in da_decisions, sealed); the plain PostgreSQL suite (pg-crash-paths)
 * and the sealed file suite (crash-paths-sealed) cover the rest.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KeyRing } from '../../src/seal/keys.ts';
import { pgScenarioStores } from '../helpers/pg-scenario-stores.ts';
import { pool, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';
import { Baselines, checkCrash, crashCases } from '../model-based/crash-check.ts';
import { type CrashPath, generateCrashPaths } from '../model-based/crash-paths.ts';

/** How many of the shortest walk's scenarios are kept: one in SHORTEST_EVERY, in their order (every other walk's all). */
const SHORTEST_EVERY = 4;

/** One path per scenario (the longest stands for its prefixes), a deterministic share of the shortest walk's, numbered anew. */
function sampledPaths(): CrashPath[] {
  const pick = (walk: Parameters<typeof generateCrashPaths>[0], every: number) => {
    const byScenario = new Map<string, CrashPath>();
    for (const path of generateCrashPaths(walk).paths) {
      const known = byScenario.get(path.scenarioKey);
      if (!known || known.steps.length < path.steps.length) byScenario.set(path.scenarioKey, path);
    }
    return [...byScenario.values()].filter((_, index) => index % every === 0);
  };
  const sampled = [...pick([['shortest', 2]], SHORTEST_EVERY), ...pick([['simple', 1, 1, 'after-another-run']], 1)];
  return sampled.map((path, index) => ({ ...path, id: index + 1 }));
}

const paths = sampledPaths();
const cases = crashCases(paths);
console.log(
  `[crash suite, sealed PostgreSQL] ${paths.length} scenarios (one in ${SHORTEST_EVERY} of the shortest paths, MAX_TURNS=2; after another run: ` +
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
  usePostgres({ connections: 20 });

  it.concurrent.each(cases)('$name', async (crash) => {
    const runId = freshRun();
    await checkCrash(crash, stores, baselines, runId);
    await expectSealed(runId);
  });
});
