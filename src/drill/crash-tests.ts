/**
 * The drill as a test per crash point, for a project's own test runner (vitest, jest,
 * node:test): `await crashTests(it, { agent, replies })` at the top of a test file registers one
 * test for each crash point of the agent's path, each failing when a side effect happened twice.
 */
import { SideEffectTwiceError } from './drill-errors.ts';
import { type DrillOptions, drillPoint, pathOf } from './drill.ts';

export { SideEffectTwiceError } from './drill-errors.ts';

/** What registers a test: vitest's and jest's `it` or `test`, node:test's `test`. */
export type RegisterTest = (name: string, body: () => Promise<void>) => unknown;

/** Registers a test per crash point of the path; resolves with the points, in order. */
export async function crashTests(register: RegisterTest, options: DrillOptions): Promise<string[]> {
  const points = await pathOf(options);
  for (const point of points) {
    register(`${options.agent.name}: killed at ${point} and resumed, no side effect twice`, async () => {
      const results = await drillPoint(options, point);
      const twice = results.filter((result) => result.outcome === 'ran-twice');
      if (twice.length > 0) throw new SideEffectTwiceError(point, twice);
    });
  }
  return points;
}
