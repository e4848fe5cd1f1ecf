/**
 * The console's first page from the head of the folder's index (head-rows.ts), before it has
 * looked at every run folder: it must be the page a console that has looked at every folder
 * gives, in each case that could leave the head wrong: a run that had ended written to again by
 * another process, a run added by another process, a journal deleted by hand, and an index left
 * torn or old. After that answer, the console looks at every folder in the background: a run
 * added or ended by another process then shows in the next answers, and the later pages are
 * the ones of every run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { headRows } from '../../src/console/head-rows.ts';
import { type RunList, RunSources } from '../../src/console/run-sources.ts';
import { listRuns } from '../../src/fleet/list-runs.ts';
import { FileRuns, startRun } from '../../src/index.ts';
import { HEAD_ENDED_RUNS, RUNS_INDEX_FILE, RunsIndex, runsFolderStamp } from '../../src/runtime/runs-index.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/testing.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { otherRunProcess, settled } from '../helpers/other-run-process.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const HOUR = 3_600_000;
const invoiceScript = () => [toolUseReply([{ id: 'toolu_send', name: 'send_email', input: { to: 'billing@example.com' } }]), endTurnReply('invoice sent')];

/** Two runs that ended and one that waits for approval (and `newer` ended after them), left alone for an hour, listed once (the index and its head written). */
async function quietFolder(newer = 0): Promise<{ dir: string; runs: FileRuns }> {
  const dir = tempDir();
  const runs = new FileRuns(dir);
  const { tools } = countingTools();
  for (const id of ['done-1', 'done-2']) await startRun({ store: runs.store(id), model: scriptedModel(invoiceScript()), tools, task: id });
  await startRun({ store: runs.store('waits-3'), model: scriptedModel(invoiceScript()), tools, task: 'waits-3', requireApproval: ['send_email'], wait: false });
  for (let n = 0; n < newer; n++) await startRun({ store: runs.store(`newer-${n}`), model: scriptedModel(invoiceScript()), tools, task: `newer-${n}` });
  age(runs.root);
  await listRuns(runs);
  return { dir, runs };
}

/** Every file and folder under `root` as if last written an hour ago, ROOT/runs last (setting the others' moves it). */
function age(root: string): void {
  const old = new Date(Date.now() - HOUR);
  for (const name of fs.readdirSync(root, { recursive: true }) as string[]) fs.utimesSync(path.join(root, name), old, old);
  fs.utimesSync(path.join(root, 'runs'), old, old);
}

/** A run folder's files as if last written an hour ago: only the mark its writer left on the folder of runs says it changed. */
function setBack(folder: string): void {
  const old = new Date(Date.now() - HOUR);
  for (const file of fs.readdirSync(folder, { recursive: true }) as string[]) fs.utimesSync(path.join(folder, file), old, old);
}

/** What a page shows: each row as the console sends it, and the counts. */
const shown = (list: RunList) => ({ ...list, rows: list.rows.map((row) => JSON.parse(JSON.stringify(row)) as unknown) });

/** A new console's first page, and whether the head was believed for it. */
async function firstPage(runs: FileRuns): Promise<{ fromHead: boolean; page: ReturnType<typeof shown> }> {
  const fromHead = (await headRows(0, runs.root)) !== null;
  const sources = new RunSources([runs.root], null, { sweepMs: HOUR });
  try {
    return { fromHead, page: shown(await sources.list({ limit: 100 })) };
  } finally {
    await sources.close();
  }
}

/** The first page of a console that looked at every run folder first (a page too long for the head). */
async function pageOfEveryFolder(runs: FileRuns): Promise<ReturnType<typeof shown>> {
  const sources = new RunSources([runs.root], null, { sweepMs: HOUR });
  try {
    await sources.list({ limit: HEAD_ENDED_RUNS });
    return shown(await sources.list({ limit: 100 }));
  } finally {
    await sources.close();
  }
}

const states = (page: ReturnType<typeof shown>) => page.rows.map((row) => `${(row as { runId: string }).runId}:${(row as { category: string }).category}`).sort();

describe("the console's first page from the head of the folder's index", () => {
  it('of a quiet folder is taken from the head, and is the page of every folder', async () => {
    const { runs } = await quietFolder();
    const first = await firstPage(runs);
    expect(first.fromHead).toBe(true);
    expect(states(first.page)).toEqual(['done-1:done', 'done-2:done', 'waits-3:waiting']);
    expect(first.page.counts).toMatchObject({ done: 2, waiting: 1 });
    expect(first.page).toEqual(await pageOfEveryFolder(runs));
    // The ended runs are kept after the head: `list --state` reads the head without them.
    expect(JSON.stringify(RunsIndex.head(runs.root))).not.toContain('done-1');
  });

  it('a run that had ended, written to again by another process, is shown as it is now', async () => {
    const { dir, runs } = await quietFolder();
    expect(await otherRunProcess(dir, 'reopen', 'done-1')).toBe(0);
    setBack(path.join(runs.root, 'runs', 'done-1'));
    await settled(runs);
    const first = await firstPage(runs);
    expect(states(first.page)).toEqual(['done-1:waiting', 'done-2:done', 'waits-3:waiting']);
    expect(first.page).toEqual(await pageOfEveryFolder(runs));
    // A listing of every run writes the head again: the next first page is the head's, and the same.
    await listRuns(runs);
    const again = await firstPage(runs);
    expect(again.fromHead).toBe(true);
    expect(again.page).toEqual(first.page);
  }, 60_000);

  it('a run that had ended, older than the ended runs the head keeps, written to again by another process: shown, and counted, as it is now', async () => {
    const { dir, runs } = await quietFolder(HEAD_ENDED_RUNS);
    expect((await firstPage(runs)).page.counts).toMatchObject({ done: HEAD_ENDED_RUNS + 2, waiting: 1 });
    expect(await otherRunProcess(dir, 'reopen', 'done-1')).toBe(0);
    setBack(path.join(runs.root, 'runs', 'done-1'));
    await settled(runs);
    const first = await firstPage(runs);
    expect(first.page.rows.slice(0, 1)).toMatchObject([{ runId: 'done-1', category: 'waiting' }]);
    expect(first.page.counts).toMatchObject({ done: HEAD_ENDED_RUNS + 1, waiting: 2 });
    expect(first.page).toEqual(await pageOfEveryFolder(runs));
  }, 120_000);

  it('a run added by another process is shown, once its folder is quiet and before', async () => {
    const { dir, runs } = await quietFolder();
    expect(await otherRunProcess(dir, 'start', 'new-4')).toBe(0);
    const before = await firstPage(runs);
    expect(states(before.page)).toEqual(['done-1:done', 'done-2:done', 'new-4:waiting', 'waits-3:waiting']);
    expect(before.page).toEqual(await pageOfEveryFolder(runs));
    await settled(runs);
    const after = await firstPage(runs);
    expect(after.page).toEqual(before.page);
  }, 60_000);

  it('a journal deleted by hand: the run it held is not shown, nor counted', async () => {
    const { runs } = await quietFolder();
    const stamp = runsFolderStamp(runs.root)!.stamp;
    // The waiting run's journal removed, then an ended one's, their folders left: the folder of runs keeps its time.
    fs.rmSync(path.join(runs.root, 'runs', 'waits-3', 'journal.jsonl'));
    const live = await firstPage(runs);
    expect(live.fromHead).toBe(true);
    expect(states(live.page)).toEqual(['done-1:done', 'done-2:done']);
    expect(live.page).toEqual(await pageOfEveryFolder(runs));
    fs.rmSync(path.join(runs.root, 'runs', 'done-2', 'journal.jsonl'));
    expect(runsFolderStamp(runs.root)!.stamp).toEqual(stamp);
    const ended = await firstPage(runs);
    expect(states(ended.page)).toEqual(['done-1:done']);
    expect(ended.page).toEqual(await pageOfEveryFolder(runs));
  });

  it('torn, or old (its writer killed before the rename, or the last to write with an older view): the page is still the page of every folder', async () => {
    const { dir, runs } = await quietFolder();
    const file = path.join(runs.root, RUNS_INDEX_FILE);
    const old = fs.readFileSync(file);
    const whole = await pageOfEveryFolder(runs);
    for (const at of [10, 40, 60, Math.floor(old.length / 2), old.length - 1]) {
      fs.writeFileSync(file, old.subarray(0, at));
      const torn = await firstPage(runs);
      expect(torn.fromHead).toBe(at > old.indexOf('"folders":'));
      expect(torn.page).toEqual(whole);
    }
    // The runs change (one reopened by another process, the waiting one's journal gone), then the old index is put back.
    expect(await otherRunProcess(dir, 'reopen', 'done-2')).toBe(0);
    fs.rmSync(path.join(runs.root, 'runs', 'waits-3', 'journal.jsonl'));
    await settled(runs);
    fs.writeFileSync(file, old);
    const first = await firstPage(runs);
    expect(states(first.page)).toEqual(['done-1:done', 'done-2:waiting']);
    fs.writeFileSync(file, old);
    expect(first.page).toEqual(await pageOfEveryFolder(runs));
  }, 60_000);

  it('after an answer from the head, a run added or ended by another process shows in the next answers, and the later pages are those of every run', async () => {
    const { dir, runs } = await quietFolder();
    const sources = new RunSources([runs.root], null, { sweepMs: HOUR });
    try {
      expect(await headRows(0, runs.root)).not.toBeNull();
      const first = await sources.list({ limit: 2 });
      expect(first.rows.map((row) => row.runId)).toEqual(['waits-3', 'done-2']);
      expect(first.more).toBe(true);
      const last = first.rows[1]!;
      const next = await sources.list({ limit: 2, after: { updatedAt: last.updatedAt ?? 0, key: last.key } });
      expect(next.rows.map((row) => row.runId)).toEqual(['done-1']);
      expect(next.more).toBe(false);
      expect(await otherRunProcess(dir, 'start', 'new-4')).toBe(0);
      await vi.waitFor(async () => expect((await sources.list({ limit: 100 })).rows.map((row) => `${row.runId}:${row.category}`)).toContain('new-4:waiting'), { timeout: 20_000, interval: 100 });
      expect(await otherRunProcess(dir, 'cancel', 'waits-3')).toBe(0);
      await vi.waitFor(async () => expect((await sources.list({ limit: 100 })).rows.map((row) => `${row.runId}:${row.category}`)).toContain('waits-3:cancelled'), { timeout: 20_000, interval: 100 });
      const now = await sources.list({ limit: 100 });
      expect(now.counts).toMatchObject({ waiting: 1, cancelled: 1, done: 2 });
      expect(shown(now)).toEqual(await pageOfEveryFolder(runs));
    } finally {
      await sources.close();
    }
  }, 60_000);
});
