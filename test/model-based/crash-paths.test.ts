/**
 * Every crash point on every path of the machine, proved on the real runtime and a real file
 * store: crash there, resume in a fresh runtime from the store alone, run to the end, and check
 * that nothing was lost, nothing was done twice, and every tool_use has its tool_result.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Baselines, checkCrash, crashCases } from './crash-check.ts';
import { describeStep, describeTransition, generateCrashPaths, machineTransitions } from './crash-paths.ts';
import { fileStores } from './scenario-runner.ts';

const { walked, paths } = generateCrashPaths();
const cases = crashCases(paths, { powerLoss: true });
console.log(
  `[crash suite] ${walked} paths walked (simple, MAX_TURNS=1; shortest, MAX_TURNS=2; shortest, MAX_TURNS=1 without pauses; simple with a cancel in every state, MAX_TURNS=1; simple, MAX_TURNS=1, taken up again in every state (a final one given what it lacked, a live one killed and given more turns); simple, MAX_TURNS=2 with a token budget the first reply reaches, then a larger one; ` +
    `the cross walk: simple with a cancel in every live state of client compaction, approvals and questions, the budget, parallel calls; ` +
    `whose a decision is, MAX_TURNS=1: twin calls of one tool and input decided one by one, a run after another whose call of the same id was approved, a fork while a decision waits, written before it or during it) → ${paths.length} distinct scenarios; ` +
    `${cases.length} crash points (${cases.filter((c) => c.powerLoss).length} of them a power loss after a turn's last ledger entry) → ${cases.length} crash-and-resume tests`,
);

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'da-crash-suite-'));
// Thousands of run folders: on a loaded disk their removal outlasts the default hook time.
afterAll(() => fs.rmSync(root, { recursive: true, force: true }), 600_000);
let dirCount = 0;
const freshDir = () => {
  const dir = path.join(root, String(++dirCount));
  fs.mkdirSync(dir);
  return dir;
};
const stores = fileStores();
const baselines = new Baselines(stores, freshDir);

describe('the machine paths and the runtime agree', () => {
  it('every path’s crash labels are the labels the runtime passes, in order', async () => {
    for (const crashPath of paths) {
      const expected = crashPath.steps.flatMap((step) => step.labels);
      const { passed } = await baselines.of(crashPath);
      expect(passed.slice(0, expected.length), `path ${crashPath.id}`).toEqual(expected);
    }
    // One run per path (~800): seconds on a quiet machine, over a minute on a crowded one.
  }, 300_000);

  it('on every step, the effect the live transition returned is the one its snapshot announces on resume', () => {
    for (const crashPath of paths) {
      for (const step of crashPath.steps) expect(step.effects.announced, `path ${crashPath.id}: ${describeStep(step)}`).toBe(step.effects.returned);
    }
  });

  it('every state and every transition of the machine is reached by some crash test, the root’s CANCEL and REOPEN from every live state', () => {
    const reachedStates = new Set(paths.flatMap((p) => p.steps.map((s) => s.to)));
    // By the state each was taken from: the root's one definition stands for a transition out of every live state.
    const taken = new Map<string, Set<unknown>>();
    for (const step of paths.flatMap((p) => p.steps)) {
      const from = taken.get(step.from) ?? new Set();
      for (const definition of step.transitions) from.add(definition);
      taken.set(step.from, from);
    }
    const missing: string[] = [];
    for (const [state, transitions] of machineTransitions()) {
      if (!reachedStates.has(state)) missing.push(`state ${state}`);
      for (const definition of transitions) if (!taken.get(state)?.has(definition)) missing.push(`transition ${describeTransition(state, definition)}`);
    }
    expect(missing).toEqual([]);
  });
});

describe('crash anywhere, resume, finish', () => {
  // Each test has its own directory and world; running them side by side overlaps their fsyncs.
  it.concurrent.each(cases)('$name', async (crash) => {
    await checkCrash(crash, stores, baselines, freshDir());
  });
});
