/**
 * Model-based: the parent's and the children's crash points walked together. The paths are the
 * points a clean run passes (CrashPoints, as the drill finds them): the editor's, with its two
 * sub-agent calls, and a writer child's. For every pair of a parent point and a child point,
 * three walks: kill the parent there, then the resume at the child's point; the child first,
 * then the parent; both armed at once (whichever comes first). After the kills a clean resume
 * finishes, and every walk ends the same: exactly two child runs, each note written once, the
 * parent charged for its children once, its answer quoting both. Each point of both paths is a
 * kill in some walk.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { totalTokens } from '../../machines/agent-loop.logic.ts';
import { childRunIdOf, FileRuns, listRuns, openRun, startRun, subagentTool } from '../../src/index.ts';
import { CrashPoints, SimulatedCrash } from '../../src/testing.ts';
import type { RunStore } from '../../src/store/store.ts';
import { auditOf, editorAgent, writerAgent } from '../helpers/subagent-agents.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const PARENT = 'editor-1';
const TASK = 'Write two notes.';

interface Arming {
  parent?: string;
  child?: string;
}

function world() {
  const dir = tempDir();
  const runs = new FileRuns(path.join(dir, '.durable-agent'));
  /** One play: started, or attached to and resumed (startRun under the run's id); resolves to the point it crashed at, or null. */
  const playOnce = async (arming: Arming): Promise<string | null> => {
    const writer = subagentTool(writerAgent(dir), arming.child ? { crashAfter: arming.child } : {});
    try {
      const result = await startRun({ agent: editorAgent([writer]), store: runs.store(PARENT), runId: PARENT, task: TASK, ...(arming.parent ? { crashAfter: arming.parent } : {}) });
      expect(result.status).toBe('done');
      return null;
    } catch (error) {
      if (!(error instanceof SimulatedCrash)) throw error;
      // As a killed process would: nothing of it goes on (a child beside the one killed stops at its next lock check or finishes).
      await allStopped([runs.store(PARENT), runs.store(childRunIdOf(PARENT, 'toolu_a')), runs.store(childRunIdOf(PARENT, 'toolu_b'))]);
      return error.message;
    }
  };
  return { dir, runs, playOnce };
}

async function allStopped(stores: readonly RunStore[]): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (const store of stores) {
    for (;;) {
      if (!(await store.exists())) break;
      try {
        await (await store.lock()).release();
        break;
      } catch {
        if (Date.now() > deadline) throw new Error(`${store.location} is still held`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
  }
}

async function pathOf(start: (crashPoints: CrashPoints) => Promise<unknown>): Promise<string[]> {
  const crashPoints = new CrashPoints(undefined);
  await start(crashPoints);
  return crashPoints.passed;
}

async function expectTheSameEnd(w: ReturnType<typeof world>, label: string) {
  const children = (await listRuns(w.runs)).filter((run) => run.calledBy?.runId === PARENT);
  expect(children.map((run) => [run.runId, run.state, run.archived]).sort(), label).toEqual([
    [childRunIdOf(PARENT, 'toolu_a'), 'done', false],
    [childRunIdOf(PARENT, 'toolu_b'), 'done', false],
  ]);
  expect(auditOf(w.dir), label).toHaveLength(2);
  expect(new Set(auditOf(w.dir)).size, label).toBe(2);
  const parent = await openRun({ store: w.runs.store(PARENT) }).status();
  expect(parent.state, label).toBe('done');
  expect(parent.finalText, label).toContain('wrote \\"note A\\"');
  expect(parent.finalText, label).toContain('wrote \\"note B\\"');
  const spent = await Promise.all(['toolu_a', 'toolu_b'].map(async (call) => totalTokens((await openRun({ store: w.runs.store(childRunIdOf(PARENT, call)) }).status()).usage)));
  expect(totalTokens(parent.chargedUsage!), label).toBe(spent[0]! + spent[1]!);
}

const probe = world();
const parentPoints = await pathOf((crashPoints) =>
  startRun({ agent: editorAgent([subagentTool(writerAgent(probe.dir))]), store: probe.runs.store('probe'), runId: 'probe', task: TASK, crashPoints }),
);
const childPoints = await pathOf((crashPoints) => startRun({ agent: writerAgent(probe.dir), store: probe.runs.store('probe-child'), task: 'note A', crashPoints }));
const pairs = parentPoints.flatMap((parent) => childPoints.map((child) => ({ parent, child })));
const crashedAt = { parent: new Set<string>(), child: new Set<string>() };

describe('the parent and its children killed together', () => {
  it('the paths walked: the parent passes its turn, its two calls and their charge; a child its own turn', () => {
    expect(parentPoints).toEqual(expect.arrayContaining(['after-save-a:1', 'after-tool-return:2', 'after-effect-write:2', 'after-save-b:1', 'after-save-done:1']));
    expect(childPoints).toEqual(expect.arrayContaining(['after-save-a:1', 'after-tool-return:1', 'after-effect-write:1', 'after-save-done:1']));
  });

  it.each(pairs)('parent killed at $parent, then the child at $child', async ({ parent, child }) => {
    const w = world();
    const first = await w.playOnce({ parent });
    if (first) crashedAt.parent.add(parent);
    const second = await w.playOnce({ child });
    if (second) crashedAt.child.add(child);
    await w.playOnce({});
    await expectTheSameEnd(w, `parent ${parent} → child ${child}`);
  });

  it.each(pairs)('the child killed at $child, then the parent at $parent', async ({ parent, child }) => {
    const w = world();
    if (await w.playOnce({ child })) crashedAt.child.add(child);
    if (await w.playOnce({ parent })) crashedAt.parent.add(parent);
    await w.playOnce({});
    await expectTheSameEnd(w, `child ${child} → parent ${parent}`);
  });

  it.each(pairs)('both armed at once: the parent at $parent, the children at $child', async ({ parent, child }) => {
    const w = world();
    expect(await w.playOnce({ parent, child })).not.toBeNull();
    // Whichever was not reached first may be on the way of the resume.
    await w.playOnce({ parent, child });
    await w.playOnce({});
    await expectTheSameEnd(w, `both ${parent} / ${child}`);
  });

  it('every point of both paths was a kill in some walk', () => {
    expect([...crashedAt.parent].sort()).toEqual([...parentPoints].sort());
    expect([...crashedAt.child].sort()).toEqual([...childPoints].sort());
  });
});
