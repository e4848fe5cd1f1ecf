/**
 * The crash suite's invariants on the PostgreSQL store, crashed at every point and resumed from
 * the database alone, on a deterministic sample of the file-store suite's paths: the shortest
 * path to every state of the machine (MAX_TURNS=2), every path of the budget walk (a token
 * budget the first reply reaches: the stop at the budget) and every path with a client
 * compaction (the file suite's, from all its walks), and every path of the walk after another run
 * (a run started where another waited for a call of the same id, approved in that run's rows of
 * da_decisions). Not the cancel walk: its scenarios ask the cancel without awaiting the write (a
 * file inbox has it at once), which a database has not; nor the fork walk (a fork into the
 * database is forkFleetRun's, proved in fleet-fork.test.ts). The cluster's commits do not wait
 * for the disk: the crashes here are the client's, never the server's (see startPostgres).
 */
import { describe, it } from 'vitest';
import { pgScenarioStores } from '../helpers/pg-scenario-stores.ts';
import { postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';
import { Baselines, checkCrash, crashCases } from '../model-based/crash-check.ts';
import { BUDGET_WALK, type CrashPath, generateCrashPaths } from '../model-based/crash-paths.ts';

/** One path per scenario (the longest stands for its prefixes, as in the file suite), numbered anew. */
function sampledPaths(): CrashPath[] {
  const byScenario = new Map<string, CrashPath>();
  const sampled = generateCrashPaths([['shortest', 2], ['simple', 2, 1, BUDGET_WALK], ['simple', 1, 1, 'after-another-run']]).paths;
  // Not the cross walk's cancels during a compaction either (why: see the top of this file).
  const compacting = generateCrashPaths().paths.filter((path) => path.scenario.compaction && path.scenario.cancelAt === undefined);
  for (const path of [...sampled, ...compacting]) {
    const known = byScenario.get(path.scenarioKey);
    if (!known || known.steps.length < path.steps.length) byScenario.set(path.scenarioKey, path);
  }
  return [...byScenario.values()].map((path, index) => ({ ...path, id: index + 1 }));
}

const paths = sampledPaths();
const cases = crashCases(paths);
console.log(
  `[crash suite, PostgreSQL] ${paths.length} scenarios (shortest paths, MAX_TURNS=2; the budget walk: ${paths.filter((p) => p.scenario.budget).length}; ` +
    `client compaction: ${paths.filter((p) => p.scenario.compaction).length}; after another run: ${paths.filter((p) => p.scenario.anotherRunFirst).length}) → ${cases.length} crash-and-resume tests`,
);

let runs = 0;
const freshRun = () => `crash-${++runs}`;
const stores = pgScenarioStores();
const baselines = new Baselines(stores, freshRun);

describe.skipIf(!postgresAvailable())('crash anywhere, resume, finish — on PostgreSQL', () => {
  usePostgres({ connections: 20, durableCommits: false });

  it.concurrent.each(cases)('$name', async (crash) => {
    await checkCrash(crash, stores, baselines, freshRun());
  });
});
