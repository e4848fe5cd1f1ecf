/**
 * The crash suite of awaits as tests, for any store (one contract, every store): each kind's
 * crash labels are those the runtime passes, and a kill at each of them, resumed from the store
 * alone, holds every invariant of await-check.ts.
 */
import { expect, it } from 'vitest';
import { type AwaitBaselines, type AwaitCase, type AwaitPath, awaitCases, awaitFactsAfterCrash, awaitPaths, awaitProblems, describeAwaitCase } from './await-check.ts';
import type { ScenarioStores } from './scenario-runner.ts';

export const AWAIT_PATHS = awaitPaths();
export const AWAIT_CASES = awaitCases(AWAIT_PATHS);

/** "approval, approved 9, …": the crash cases of each kind. */
export function casesPerKind(paths: readonly AwaitPath[] = AWAIT_PATHS, cases: readonly AwaitCase[] = AWAIT_CASES): string {
  return paths.map(({ kind }) => `${kind.name}: ${cases.filter((crash) => crash.kind === kind).length}`).join('; ');
}

/** The tests of the kinds every store has, or of other kinds (a fleet's, on PostgreSQL only). */
export function defineAwaitCrashTests(stores: ScenarioStores, baselines: AwaitBaselines, freshKey: () => string, paths: readonly AwaitPath[] = AWAIT_PATHS, cases: readonly AwaitCase[] = AWAIT_CASES): void {
  it.each(paths.map((entry) => ({ ...entry, name: entry.kind.name })))('$name: the path’s crash labels are the ones the runtime passes, in order', async (entry) => {
    const baseline = await baselines.of(entry);
    expect(baseline.status).toBe('done');
    expect(baseline.passed).toEqual(entry.path.steps.flatMap((step) => step.labels));
    expect(baseline.takes).toBe(entry.kind.endedBy === 'signal' ? entry.kind.calls.length : 0);
  });

  // Each case has its own run (a directory, a run id) and world: side by side, their waits overlap.
  it.concurrent.each(cases.map((crash) => [crash.name, crash] as const))('%s', async (_name, crash) => {
    const facts = await awaitFactsAfterCrash(crash, stores, baselines, freshKey());
    expect(awaitProblems(facts), describeAwaitCase(crash, stores)).toEqual([]);
  });
}
