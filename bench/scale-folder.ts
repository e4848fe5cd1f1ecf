/**
 * A folder of file runs at scale: SMALL runs by id and `runs` (ten thousand by default), made by
 * copying two real demo runs (one done, one waiting for a person's approval) under new ids, as
 * many waiting in both folders; each operation timed on both, interleaved. The console's first
 * page is a console's first answer (a new list of runs each time): what a person waits for when
 * they open it. A `list` of every run is made on each folder first, which writes its index.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RunSources } from '../src/console/run-sources.ts';
import { listRuns } from '../src/fleet/list-runs.ts';
import { readRunStatus } from '../src/runtime/run-status.ts';
import { openRunsFolder } from '../src/store/open-store.ts';
import { onExit } from './exit-cleanup.ts';
import { type Operation, timeInterleaved } from './scale-timing.ts';

export const SMALL_FOLDER = 1000;
const WAITING = 10;
const CLI = path.join(import.meta.dirname, '..', 'bin', 'durable-agent.mjs');

function demo(dir: string, args: string[]): void {
  const made = spawnSync(process.execPath, [CLI, 'demo', ...args], { cwd: dir, encoding: 'utf8' });
  if (made.status !== 0 && !args.includes('--no-wait')) throw new Error(`the seed run failed: ${made.stderr}`);
}

/** `count` runs by id in DIR's state folder: copies of a done run, and WAITING of one that waits for approval. */
function folderOf(root: string, count: number): string {
  const dir = path.join(root, `runs-${count}`);
  fs.mkdirSync(dir);
  demo(dir, ['--run', 'seed-done']);
  demo(dir, ['--run', 'seed-waiting', '--require-approval', 'write_report', '--no-wait']);
  const runs = path.join(dir, '.durable-agent', 'runs');
  for (let n = 0; n < count; n++) {
    const seed = n < WAITING ? 'seed-waiting' : 'seed-done';
    fs.cpSync(path.join(runs, seed), path.join(runs, `run-${String(n).padStart(6, '0')}`), { recursive: true });
  }
  fs.rmSync(path.join(runs, 'seed-done'), { recursive: true });
  fs.rmSync(path.join(runs, 'seed-waiting'), { recursive: true });
  return path.join(dir, '.durable-agent');
}

function operations(stateFolder: string): Operation[] {
  const folder = openRunsFolder(stateFolder);
  return [
    {
      name: 'status of one run',
      run: async () => {
        const status = await readRunStatus(folder.store('run-000500'));
        if (status.state !== 'done') throw new Error(`run-000500 is ${status.state}`);
      },
    },
    {
      name: 'list --state waiting',
      run: async () => {
        const runs = await listRuns(folder, { states: ['awaitingDecision'] });
        if (runs.length !== WAITING) throw new Error(`${runs.length} runs wait, not ${WAITING}`);
      },
    },
    {
      name: "console's first page",
      run: async () => {
        const sources = new RunSources([stateFolder], null);
        try {
          const page = await sources.list({ limit: 100 });
          if (page.rows.length !== 100) throw new Error(`the first page has ${page.rows.length} rows`);
        } finally {
          await sources.close();
        }
      },
    },
  ];
}

export async function scaleFolder(runs: number, log: (line: string) => void): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-bench-scale-'));
  const stop = onExit('the folders of runs', () => fs.rmSync(root, { recursive: true, force: true }));
  try {
    const sizes = [SMALL_FOLDER, runs];
    const folders = sizes.map((count) => {
      const started = performance.now();
      const folder = folderOf(root, count);
      log(`  made ${count.toLocaleString('en')} file runs in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      return folder;
    });
    // The folder's index made first, as a person's earlier `list` made it (its time said apart): what is timed is the answers after it.
    for (const [at, folder] of folders.entries()) {
      const started = performance.now();
      await listRuns(openRunsFolder(folder));
      log(`  list of all ${sizes[at]!.toLocaleString('en')} runs (the index made): ${(performance.now() - started).toFixed(0)} ms`);
    }
    const results = await timeInterleaved(sizes, folders.map(operations));
    log(`File runs (one folder of runs by id), ${SMALL_FOLDER.toLocaleString('en')} against ${runs.toLocaleString('en')} (${WAITING} waiting in both; medians):`);
    for (const line of results) log(line);
  } finally {
    stop();
  }
}
