/**
 * The crash suite of awaits on the PostgreSQL store: every kind of await (walks/await-kinds.ts),
 * killed at every crash point of its path, decided from outside through the database (the
 * da_decisions inbox, the signals' table, the clock), resumed from the database alone, and held
 * to the same invariants as on the file store (await-check.ts). And the kind a fleet only has
 * (child-await-kinds.ts): a sub-agent call waiting for the child run it queued in da_runs, the
 * child driven and its end delivered (or the delivery lost) from outside, as a worker would.
 */
import { describe, expect, it } from 'vitest';
import type { Decision } from '../../machines/agent-loop.types.ts';
import type { DecisionInbox } from '../../src/store/store.ts';
import { pgScenarioStores } from '../helpers/pg-scenario-stores.ts';
import { postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';
import { AwaitBaselines, awaitCases, awaitFactsAfterCrash, awaitPaths, awaitProblems, childQueuedOnce } from '../model-based/await-check.ts';
import type { StoreHook } from '../model-based/await-runner.ts';
import { AWAIT_CASES, AWAIT_PATHS, casesPerKind, defineAwaitCrashTests } from '../model-based/await-suite.ts';
import { CHILD_AWAIT_KINDS } from './child-await-kinds.ts';

const CHILD_PATHS = awaitPaths(CHILD_AWAIT_KINDS);
const CHILD_CASES = awaitCases(CHILD_PATHS);
const kinds = AWAIT_PATHS.length + CHILD_PATHS.length;
console.log(`[crash suite of awaits, PostgreSQL] ${kinds} kinds → ${AWAIT_CASES.length + CHILD_CASES.length} crash-and-resume tests (${casesPerKind()}; ${casesPerKind(CHILD_PATHS, CHILD_CASES)})`);

let runs = 0;
const freshRun = () => `await-${++runs}`;
const stores = pgScenarioStores();

describe.skipIf(!postgresAvailable())('crash anywhere in an await, resume, finish — on PostgreSQL', () => {
  usePostgres({ connections: 20 });
  const baselines = new AwaitBaselines(stores, freshRun);
  defineAwaitCrashTests(stores, baselines, freshRun);
  describe('a sub-agent call waiting for its child run (a fleet only)', () => {
    defineAwaitCrashTests(stores, baselines, freshRun, CHILD_PATHS, CHILD_CASES);

    // A wrong runtime hook: the run's inbox hands it each delivered child end changed by `change`.
    const inboxChanging =
      (change: (decision: Decision) => Decision): StoreHook =>
      (store) => {
        const inner = store.decisions!;
        const read: DecisionInbox['read'] = async () => (await inner.read()).map((decision) => (decision.child ? change(decision) : decision));
        const changed = new Proxy(inner, { get: (target, name) => (name === 'read' ? read : (Reflect.get(target, name) as unknown)) });
        Object.defineProperty(store, 'decisions', { value: changed, configurable: true });
      };
    const delivered = CHILD_CASES.find((crash) => crash.kind.fleet?.delivered && crash.label === 'after-save-waiting:1')!;

    it("eachAwaitDecidedOnce catches a run that takes another child's end for its call's", async () => {
      const other = { runId: 'another-run.t1_child', state: 'done' };
      const hook = inboxChanging((decision) => ({ ...decision, by: `sub-agent run ${other.runId}`, text: 'another note', child: other }));
      const problems = awaitProblems(await awaitFactsAfterCrash(delivered, stores, baselines, freshRun(), hook));
      expect(problems).toContainEqual(expect.stringMatching(/^nothingLost: the conversation differs/));
      expect(problems).toContainEqual(expect.stringMatching(/^eachAwaitDecidedOnce: t1_child: recorded .*another-run\.t1_child.*, the child's end delivered is .*await-\d+\.t1_child/));
    });

    it('childQueuedOnce catches a child queued under another id, a second child, and the child’s effect twice or never', async () => {
      const facts = await awaitFactsAfterCrash(delivered, stores, baselines, freshRun());
      expect(awaitProblems(facts)).toEqual([]);
      const [child] = facts.queued!;
      expect(child).toBe(`${facts.key}.t1_child`);
      expect(childQueuedOnce({ ...facts, queued: [`${facts.key}.t1_other`] })).toEqual([expect.stringContaining('not ["')]);
      expect(childQueuedOnce({ ...facts, queued: [child!, `${child}.again`] })).toEqual([expect.stringContaining('not ["')]);
      expect(childQueuedOnce({ ...facts, effects: new Map([['c1_note', 2]]) })).toEqual(["the child's side effect c1_note took place 2 times, not once"]);
      expect(childQueuedOnce({ ...facts, effects: new Map() })).toEqual(["the child's side effect c1_note took place 0 times, not once"]);
    });

    it('a run takes no answer without its `child` field for a child await: it reads the child itself (only the time differs from the end delivered)', async () => {
      const hook = inboxChanging(({ child: _dropped, ...decision }) => decision);
      const problems = awaitProblems(await awaitFactsAfterCrash(delivered, stores, baselines, freshRun(), hook));
      // An answer in the child's place (a hand-written row, a broken delivery) does not fit the call; the child's own end does.
      expect(problems).toEqual([expect.stringMatching(/^eachAwaitDecidedOnce: t1_child: recorded .*"by":"sub-agent run [^"]+".*"child":\{.*, the child's end delivered is /)]);
      expect(problems.join('\n')).not.toContain('ended by the person');
    });

  });
});
