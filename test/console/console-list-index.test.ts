/**
 * The console's list is an index kept current by watches, and must never be stale: runs written,
 * added and removed by other processes while the console is up show as they are in the next
 * answer after the write (a resume that finishes a run, a run added, one archived by --fresh,
 * one removed, a pause asked by `pause` and one taken back inside the control inbox); at the
 * system's limit of watches the runs it cannot watch are read at every answer, and the console
 * says so once; and a watch that misses every event is made good by the background look.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RunningConsole, startConsole } from '../../src/console/console-server.ts';
import { type WatchFolder, watchFolder } from '../../src/console/folder-watches.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { runCliAsync, startCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const TOKEN = 'di:console-index-token-0123456789';
/** So long that no answer here is made right by the background look, only by the watches. */
const NO_SWEEP_MS = 3_600_000;

interface Row {
  runId: string;
  key: string;
  category: string;
  state: string | null;
  archived: boolean;
  pausedBy: string | null;
}

let running: RunningConsole | null = null;

afterEach(async () => {
  await running?.close();
  running = null;
});

const demo = (dir: string, ...args: string[]) => runCliAsync(['demo', ...args], { cwd: dir });

async function start(dir: string, options: { watch?: WatchFolder; sweepMs?: number; notices?: string[] } = {}): Promise<RunningConsole> {
  running = await startConsole({
    roots: [path.join(dir, '.durable-agent')],
    port: 0,
    token: TOKEN,
    user: 'nobody',
    notice: (line) => options.notices?.push(line),
    sources: { watch: options.watch, sweepMs: options.sweepMs ?? NO_SWEEP_MS },
  });
  return running;
}

async function list(): Promise<Row[]> {
  const response = await fetch(`${running!.origin}/api/runs`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { rows: Row[] }).rows;
}

async function categories(): Promise<Record<string, string>> {
  return Object.fromEntries((await list()).map((row) => [`${row.runId}${row.archived ? ' (archived)' : ''}`, row.category]));
}

let seed: string;

beforeAll(async () => {
  // Two waiting runs and a finished one, made once and copied for each test.
  seed = tempDir('da-console-index-seed-');
  const made = await Promise.all([
    demo(seed, '--run', 'wait-1', '--require-approval', 'write_report', '--no-wait'),
    demo(seed, '--run', 'wait-2', '--require-approval', 'write_report', '--no-wait'),
    demo(seed, '--run', 'done-1'),
  ]);
  expect(made.map((run) => run.code)).toEqual([7, 7, 0]);
}, 60_000);

function copyOfSeed(): string {
  const dir = tempDir('da-console-index-');
  fs.cpSync(path.join(seed, '.durable-agent'), path.join(dir, '.durable-agent'), { recursive: true });
  return dir;
}

describe('the list of a folder of runs, while other processes write them', () => {
  it('shows each write in the next answer: a run finished, added, archived and removed', async () => {
    const dir = copyOfSeed();
    await start(dir);
    expect(await categories()).toEqual({ 'wait-1': 'waiting', 'wait-2': 'waiting', 'done-1': 'done' });

    expect((await runCliAsync(['approve', 'toolu_03', '--run', 'wait-1'], { cwd: dir })).code).toBe(0);
    expect((await demo(dir, '--run', 'wait-1', '--resume')).code).toBe(0);
    expect(await categories()).toEqual({ 'wait-1': 'done', 'wait-2': 'waiting', 'done-1': 'done' });

    expect((await demo(dir, '--run', 'new-1')).code).toBe(0);
    expect((await categories())['new-1']).toBe('done');

    // --fresh moves the waiting run aside (archive/) and starts a new one in its folder.
    expect((await demo(dir, '--run', 'wait-2', '--fresh')).code).toBe(0);
    expect(await categories()).toEqual({ 'wait-1': 'done', 'wait-2': 'done', 'wait-2 (archived)': 'waiting', 'done-1': 'done', 'new-1': 'done' });

    fs.rmSync(path.join(dir, '.durable-agent', 'runs', 'new-1'), { recursive: true });
    expect(Object.keys(await categories()).sort()).toEqual(['done-1', 'wait-1', 'wait-2', 'wait-2 (archived)']);

    // A run removed and made again under the same name: its new folder is watched, not the old one.
    fs.rmSync(path.join(dir, '.durable-agent', 'runs', 'done-1'), { recursive: true });
    expect((await demo(dir, '--run', 'done-1', '--require-approval', 'write_report', '--no-wait')).code).toBe(7);
    expect((await categories())['done-1']).toBe('waiting');
    expect((await runCliAsync(['approve', 'toolu_03', '--run', 'done-1'], { cwd: dir })).code).toBe(0);
    expect((await demo(dir, '--run', 'done-1', '--resume')).code).toBe(0);
    expect((await categories())['done-1']).toBe('done');
  }, 60_000);

  it('shows a run that another process drives as it goes, and a pause in its control inbox, asked and taken back', async () => {
    const dir = copyOfSeed();
    await start(dir);
    const paced = startCli(['demo', '--run', 'paced-1', '--pace', '300ms'], { cwd: dir });
    await vi.waitFor(() => expect(paced.output()).toContain('[turn 1]'), { timeout: 30_000, interval: 25 });
    expect((await list()).find((row) => row.runId === 'paced-1')?.category).toBe('running');
    expect((await runCliAsync(['pause', '--run', 'paced-1', '--by', 'ana'], { cwd: dir })).code).toBe(0);
    expect((await list()).find((row) => row.runId === 'paced-1')).toMatchObject({ category: 'paused', pausedBy: 'ana' });
    expect((await paced.done).code).toBe(130);
    expect((await list()).find((row) => row.runId === 'paced-1')).toMatchObject({ category: 'paused', pausedBy: 'ana' });
    // The pause taken back: a file gone inside control/, which only the watch on control/ sees.
    await new FileStore(path.join(dir, '.durable-agent', 'runs', 'paced-1')).control.settle('pause');
    expect((await list()).find((row) => row.runId === 'paced-1')).toMatchObject({ category: 'running', pausedBy: null });
    expect((await demo(dir, '--run', 'paced-1', '--resume')).code).toBe(0);
    expect((await list()).find((row) => row.runId === 'paced-1')?.category).toBe('done');
  }, 60_000);

  it('at the limit of watches reads the runs it cannot watch at every answer, and says so once', async () => {
    const dir = copyOfSeed();
    const notices: string[] = [];
    let left = 3; // the state folder, runs/ and one run: the rest are past the limit
    const watch: WatchFolder = (folder, listener) => {
      if (left-- <= 0) throw Object.assign(new Error(`ENOSPC: System limit for number of file watchers reached, watch '${folder}'`), { code: 'ENOSPC' });
      return watchFolder(folder, listener);
    };
    await start(dir, { watch, notices });
    expect(await categories()).toEqual({ 'wait-1': 'waiting', 'wait-2': 'waiting', 'done-1': 'done' });
    for (const run of ['wait-1', 'wait-2']) {
      expect((await runCliAsync(['approve', 'toolu_03', '--run', run], { cwd: dir })).code).toBe(0);
      expect((await demo(dir, '--run', run, '--resume')).code).toBe(0);
    }
    expect((await demo(dir, '--run', 'new-1', '--require-approval', 'write_report', '--no-wait')).code).toBe(7);
    expect(await categories()).toEqual({ 'wait-1': 'done', 'wait-2': 'done', 'done-1': 'done', 'new-1': 'waiting' });
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain('fs.inotify.max_user_watches');
  }, 60_000);

  it('a watch that misses every event: the background look finds what changed', async () => {
    const dir = copyOfSeed();
    const deaf: WatchFolder = (folder) => watchFolder(folder, () => {});
    await start(dir, { watch: deaf, sweepMs: 200 });
    expect((await categories())['wait-1']).toBe('waiting');
    expect((await runCliAsync(['approve', 'toolu_03', '--run', 'wait-1'], { cwd: dir })).code).toBe(0);
    expect((await demo(dir, '--run', 'wait-1', '--resume')).code).toBe(0);
    expect((await demo(dir, '--run', 'new-1')).code).toBe(0);
    await expect.poll(categories, { timeout: 30_000, interval: 100 }).toEqual({ 'wait-1': 'done', 'wait-2': 'waiting', 'done-1': 'done', 'new-1': 'done' });
  }, 60_000);
});
