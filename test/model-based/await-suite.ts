/**
 * The crash suite of awaits as tests, for any store (one contract, every store): each kind's
 * crash labels are those the runtime passes, and a kill at each of them, resumed from the store
 * alone, holds every invariant of await-check.ts.
 */
import { expect, it } from 'vitest';
import { type AwaitBaselines, awaitCases, awaitFactsAfterCrash, awaitPaths, awaitProblems, describeAwaitCase } from './await-check.ts';
import type { ScenarioStores } from './scenario-runner.ts';

export const AWAIT_PATHS = awaitPaths();
export const AWAIT_CASES = awaitCases(AWAIT_PATHS);

/** "approval, approved 9, …": the crash cases of each kind. */
export function casesPerKind(): string {
  return AWAIT_PATHS.map(({ kind }) => `${kind.name}: ${AWAIT_CASES.filter((crash) => crash.kind === kind).length}`).join('; ');
}

export function defineAwaitCrashTests(stores: ScenarioStores, baselines: AwaitBaselines, freshKey: () => string): void {
  it.each(AWAIT_PATHS.map((entry) => ({ ...entry, name: entry.kind.name })))('$name: the path’s crash labels are the ones the runtime passes, in order', async (entry) => {
    const baseline = await baselines.of(entry);
    expect(baseline.status).toBe('done');
    expect(baseline.passed).toEqual(entry.path.steps.flatMap((step) => step.labels));
    expect(baseline.takes).toBe(entry.kind.endedBy === 'signal' ? entry.kind.calls.length : 0);
  });

  // Each case has its own run (a directory, a run id) and world: side by side, their waits overlap.
  it.concurrent.each(AWAIT_CASES.map((crash) => [crash.name, crash] as const))('%s', async (_name, crash) => {
    const facts = await awaitFactsAfterCrash(crash, stores, baselines, freshKey());
    expect(awaitProblems(facts), describeAwaitCase(crash, stores)).toEqual([]);
  });
}
