/**
 * A parent run that fails in a program's process while one of its sub-agent runs is still going
 * on (here a crash point; in use a failed write, a lost lock): the child is not stopped (a tool in
 * flight is left to finish, as a killed process would leave it), so a resume of the parent in the
 * same process meets that child still running. Its call must wait for the child and take its
 * answer, not record a failure because the child's lock is held, by this very process.
 */
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { childRunIdOf, FileRuns, openRun, resumeRun, startRun, subagentTool } from '../../src/index.ts';
import { SimulatedCrash } from '../../src/testing.ts';
import { auditOf, editorAgent, writerAgent } from '../helpers/subagent-agents.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const PARENT = 'editor-1';

/** A gate a test opens: the writer of note B waits on it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** The writer of the sub-agent tests; note B's write waits for the gate (note A's does not). */
function gatedWriter(dir: string, gateB: Promise<void>, started: string[]) {
  return writerAgent(dir, {
    beforeWrite: (text) => {
      started.push(text);
      return text === 'note B' ? gateB : undefined;
    },
  });
}

describe('a sub-agent run left running by its parent’s failure, in the same process', () => {
  it('the parent resumed at once waits for that child and takes its answer: each note written once, no call recorded failed', async () => {
    const dir = tempDir();
    const runs = new FileRuns(path.join(dir, '.durable-agent'));
    const gateB = gate();
    const started: string[] = [];
    const editor = () => editorAgent([subagentTool(gatedWriter(dir, gateB.opened, started))]);

    // Note A's child ends and its outcome is recorded; the parent then fails, note B's child still writing.
    const first = startRun({ agent: editor(), store: runs.store(PARENT), task: 'Write two notes.', runId: PARENT, crashAfter: 'after-effect-write:1' });
    await expect(first).rejects.toBeInstanceOf(SimulatedCrash);
    expect(started).toEqual(['note A', 'note B']);
    expect((await openRun({ store: runs.store(childRunIdOf(PARENT, 'toolu_b')) }).status()).state).not.toBe('done');

    // The gate opens once the resume has started note B's call again, while its child still writes
    // (a while later: long enough for a call that does not wait to meet the child's lock first).
    const result = await resumeRun({
      agent: editor(),
      store: runs.store(PARENT),
      observer: (event) => {
        if (event.type === 'tool-started' && event.call.id === 'toolu_b') setTimeout(gateB.open, 200);
      },
    });
    expect(result.status).toBe('done');
    expect(result.text).toContain('wrote \\"note A\\"');
    expect(result.text).toContain('wrote \\"note B\\"');
    expect(result.text).not.toMatch(/driven by another process|failed/);
    // Note B's child ran once: one write, and the resume started no second one.
    expect(started).toEqual(['note A', 'note B']);
    expect(auditOf(dir)).toHaveLength(2);
    expect((await openRun({ store: runs.store(childRunIdOf(PARENT, 'toolu_b')) }).status()).state).toBe('done');
  });

  it('a cancel of the resumed parent while its call waits for that child ends the parent cancelled and reaches the child, which ends cancelled after its write', async () => {
    const dir = tempDir();
    const runs = new FileRuns(path.join(dir, '.durable-agent'));
    const gateB = gate();
    const started: string[] = [];
    const editor = () => editorAgent([subagentTool(gatedWriter(dir, gateB.opened, started))]);
    await expect(startRun({ agent: editor(), store: runs.store(PARENT), task: 'Write two notes.', runId: PARENT, crashAfter: 'after-effect-write:1' })).rejects.toBeInstanceOf(SimulatedCrash);

    const childB = () => runs.store(childRunIdOf(PARENT, 'toolu_b'));
    const result = await resumeRun({
      agent: editor(),
      store: runs.store(PARENT),
      observer: (event) => {
        if (event.type === 'tool-started' && event.call.id === 'toolu_b') void openRun({ store: runs.store(PARENT) }).cancel({ by: 'ana', reason: 'not needed' });
      },
    });
    expect(result.status).toBe('cancelled');
    // The child's write was under way: it ends, and the child stops at its next step, cancelled too.
    gateB.open();
    await vi.waitFor(async () => expect((await openRun({ store: childB() }).status()).state).toBe('cancelled'), { timeout: 20_000, interval: 20 });
    expect(started).toEqual(['note A', 'note B']);
    expect(auditOf(dir)).toHaveLength(2);
  });
});
