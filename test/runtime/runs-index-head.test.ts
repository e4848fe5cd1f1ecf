/**
 * The head of a folder's index (runs-index.ts): asked for the runs that wait, a listing looks only
 * at the runs that have not ended while the folder of runs keeps the time the index saw. Each
 * case here is one that must never leave it wrong: a run that had ended written to again by
 * another process, a run added by another process, a journal deleted by hand, and an index left
 * torn or old by a writer killed while it wrote (or one that wrote last with an older view).
 * Every answer is checked against the journals read one by one (a listing of every run).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listRuns } from '../../src/fleet/list-runs.ts';
import { FileRuns, startRun } from '../../src/index.ts';
import { RUNS_INDEX_FILE, RunsIndex, runsFolderStamp } from '../../src/runtime/runs-index.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/testing.ts';
import { REPO } from '../helpers/cli.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { otherRunProcess, settled } from '../helpers/other-run-process.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const HOUR = 3_600_000;
const invoiceScript = () => [toolUseReply([{ id: 'toolu_send', name: 'send_email', input: { to: 'billing@example.com' } }]), endTurnReply('invoice sent')];

/** Two runs that ended and one that waits for approval, in a folder left alone for an hour (every time set back). */
async function quietFolder(): Promise<{ dir: string; runs: FileRuns }> {
  const dir = tempDir();
  const runs = new FileRuns(dir);
  const { tools } = countingTools();
  for (const id of ['done-1', 'done-2']) await startRun({ store: runs.store(id), model: scriptedModel(invoiceScript()), tools, task: id });
  await startRun({ store: runs.store('waits-3'), model: scriptedModel(invoiceScript()), tools, task: 'waits-3', requireApproval: ['send_email'], wait: false });
  age(runs.root);
  return { dir, runs };
}

/** Every file and folder under `root` as if last written an hour ago (the folder's own time last: setting the others' does not move it). */
function age(root: string): void {
  const old = new Date(Date.now() - HOUR);
  for (const name of fs.readdirSync(root, { recursive: true }) as string[]) fs.utimesSync(path.join(root, name), old, old);
  fs.utimesSync(path.join(root, 'runs'), old, old);
}

const waiting = async (runs: FileRuns) => (await listRuns(runs, { states: ['awaitingDecision'] })).map((run) => `${run.runId}:${run.state}:${run.children}`);
/** The same question answered from every journal: what the index must agree with. */
const truth = async (runs: FileRuns) =>
  (await listRuns(runs)).filter((run) => run.state === 'awaitingDecision').map((run) => `${run.runId}:${run.state}:${run.children}`);

describe('the head of the index of a folder of runs', () => {
  it('is written by a listing of a quiet folder, and answers for the runs that wait with what the journals say', async () => {
    const { runs } = await quietFolder();
    expect(await waiting(runs)).toEqual(['waits-3:awaitingDecision:0']);
    const head = RunsIndex.head(runs.root)!;
    expect(head.whole?.runsDir).toEqual(runsFolderStamp(runs.root)!.stamp);
    expect(Object.keys(head.live)).toEqual(['waits-3']);
    expect(await waiting(runs)).toEqual(await truth(runs));
  });

  it('a run that had ended, written to again by another process, is listed as it is now', async () => {
    const { dir, runs } = await quietFolder();
    expect(await waiting(runs)).toEqual(['waits-3:awaitingDecision:0']);
    expect(await otherRunProcess(dir, 'reopen', 'done-1')).toBe(0);
    // Its journal's times set back too: only the mark its writer left on the folder of runs says it changed.
    for (const file of fs.readdirSync(path.join(runs.root, 'runs', 'done-1'), { recursive: true }) as string[]) {
      const old = new Date(Date.now() - HOUR);
      fs.utimesSync(path.join(runs.root, 'runs', 'done-1', file), old, old);
    }
    await settled(runs);
    expect(await waiting(runs)).toEqual(['done-1:awaitingDecision:0', 'waits-3:awaitingDecision:0']);
    expect(await waiting(runs)).toEqual(await truth(runs));
  }, 60_000);

  it('a run added by another process is listed, once its folder is quiet and before', async () => {
    const { dir, runs } = await quietFolder();
    expect(await waiting(runs)).toEqual(['waits-3:awaitingDecision:0']);
    expect(await otherRunProcess(dir, 'start', 'new-4')).toBe(0);
    expect(await waiting(runs)).toEqual(await truth(runs));
    expect((await waiting(runs)).sort()).toEqual(['new-4:awaitingDecision:0', 'waits-3:awaitingDecision:0']);
    await settled(runs);
    expect((await waiting(runs)).sort()).toEqual(['new-4:awaitingDecision:0', 'waits-3:awaitingDecision:0']);
  }, 60_000);

  it('a journal deleted by hand: the run it held is not listed', async () => {
    const { runs } = await quietFolder();
    expect(await waiting(runs)).toEqual(['waits-3:awaitingDecision:0']);
    // The waiting run's journal removed, its folder left: the folder of runs keeps its time.
    const stamp = runsFolderStamp(runs.root)!.stamp;
    fs.rmSync(path.join(runs.root, 'runs', 'waits-3', 'journal.jsonl'));
    expect(runsFolderStamp(runs.root)!.stamp).toEqual(stamp);
    expect(await waiting(runs)).toEqual([]);
    expect(await truth(runs)).toEqual([]);
    // An ended run's journal removed: a listing of every run does not show it either.
    fs.rmSync(path.join(runs.root, 'runs', 'done-2', 'journal.jsonl'));
    expect((await listRuns(runs)).map((run) => run.runId).sort()).toEqual(['done-1']);
  });

  it('torn, or old (its writer killed before the rename, or the last to write with an older view): the answer is still what the journals say', async () => {
    const { dir, runs } = await quietFolder();
    expect(await waiting(runs)).toEqual(['waits-3:awaitingDecision:0']);
    const file = path.join(runs.root, RUNS_INDEX_FILE);
    const old = fs.readFileSync(file);
    // Torn anywhere: in the head's length, in the head, after it.
    for (const at of [10, 40, 60, Math.floor(old.length / 2), old.length - 1]) {
      fs.writeFileSync(file, old.subarray(0, at));
      expect(await waiting(runs)).toEqual(['waits-3:awaitingDecision:0']);
    }
    // The runs change (one reopened by another process, the waiting one's journal gone), then the old index is put back.
    expect(await otherRunProcess(dir, 'reopen', 'done-2')).toBe(0);
    fs.rmSync(path.join(runs.root, 'runs', 'waits-3', 'journal.jsonl'));
    await settled(runs);
    fs.writeFileSync(file, old);
    expect(await waiting(runs)).toEqual(['done-2:awaitingDecision:0']);
    fs.writeFileSync(file, old);
    expect(await truth(runs)).toEqual(['done-2:awaitingDecision:0']);
  }, 60_000);

  it('written by a process killed at any moment while other processes write runs: never a run missing, one gone shown, or a wrong state', async () => {
    const { dir, runs } = await quietFolder();
    const lister = `
      import { listRuns } from ${JSON.stringify(path.join(REPO, 'src/fleet/list-runs.ts'))};
      import { FileRuns } from ${JSON.stringify(path.join(REPO, 'src/index.ts'))};
      const runs = new FileRuns(process.argv[1]);
      for (;;) await listRuns(runs, { states: ['awaitingDecision'] });`;
    for (let round = 0; round < 3; round++) {
      const listers = [0, 1].map(() => spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', lister, dir], { cwd: REPO, stdio: 'ignore' }));
      expect(await otherRunProcess(dir, 'start', `added-${round}`)).toBe(0);
      if (round < 2) expect(await otherRunProcess(dir, 'reopen', round === 0 ? 'done-1' : 'done-2')).toBe(0);
      for (const child of listers) child.kill('SIGKILL');
      await Promise.all(listers.map((child) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('exit', resolve)))));
      expect((await waiting(runs)).sort()).toEqual((await truth(runs)).sort());
      await settled(runs);
      expect((await waiting(runs)).sort()).toEqual((await truth(runs)).sort());
    }
    expect((await waiting(runs)).sort()).toEqual(['added-0:awaitingDecision:0', 'added-1:awaitingDecision:0', 'added-2:awaitingDecision:0', 'done-1:awaitingDecision:0', 'done-2:awaitingDecision:0', 'waits-3:awaitingDecision:0']);
  }, 120_000);
});
