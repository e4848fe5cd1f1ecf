/**
 * The index of a folder of runs (runs-index.json): a listing takes a run folder's summaries from
 * it only while the folder's signature is the one it holds, so a journal changed behind it wins;
 * an index deleted or damaged is written again from the journals; and two processes writing it
 * at once, killed at any moment, leave a whole index or none, never a part.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listRuns } from '../../src/fleet/list-runs.ts';
import { FileRuns, startRun } from '../../src/index.ts';
import { RUNS_INDEX_FILE } from '../../src/runtime/runs-index.ts';
import { endTurnReply, scriptedModel } from '../../src/testing.ts';
import { REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

async function folderOfRuns(tasks: Record<string, string>): Promise<FileRuns> {
  const runs = new FileRuns(tempDir());
  for (const [id, task] of Object.entries(tasks)) await startRun({ store: runs.store(id), model: scriptedModel([endTurnReply(`${task}: done`)]), tools: [], task });
  return runs;
}

const tasksOf = async (runs: FileRuns) => Object.fromEntries((await listRuns(runs)).map((run) => [run.runId, run.task]));
const indexFile = (runs: FileRuns) => path.join(runs.root, RUNS_INDEX_FILE);

describe('the index of a folder of runs', () => {
  it('is written by a listing, and a journal changed behind it wins over what it holds', async () => {
    const runs = await folderOfRuns({ a: 'task a', b: 'task b', c: 'task c' });
    expect(await tasksOf(runs)).toEqual({ a: 'task a', b: 'task b', c: 'task c' });
    const index = JSON.parse(fs.readFileSync(indexFile(runs), 'utf8')) as { folders: Record<string, unknown> };
    expect(Object.keys(index.folders).sort()).toEqual(['a', 'b', 'c']);
    // Run b's journal replaced by another run's, the index left as it was: the listing reads the journal.
    const other = await folderOfRuns({ b: 'another task' });
    const journal = path.join(runs.root, 'runs', 'b', 'journal.jsonl');
    fs.copyFileSync(path.join(other.root, 'runs', 'b', 'journal.jsonl'), `${journal}.new`);
    fs.renameSync(`${journal}.new`, journal);
    expect(await tasksOf(runs)).toEqual({ a: 'task a', b: 'another task', c: 'task c' });
    // A run removed is dropped from the index.
    fs.rmSync(path.join(runs.root, 'runs', 'c'), { recursive: true });
    expect(await tasksOf(runs)).toEqual({ a: 'task a', b: 'another task' });
    expect(Object.keys((JSON.parse(fs.readFileSync(indexFile(runs), 'utf8')) as typeof index).folders).sort()).toEqual(['a', 'b']);
  });

  it('deleted or damaged, is no index: the journals are read and it is written again from them', async () => {
    const runs = await folderOfRuns({ a: 'task a', b: 'task b' });
    const expected = await tasksOf(runs);
    fs.rmSync(indexFile(runs));
    expect(await tasksOf(runs)).toEqual(expected);
    expect(fs.existsSync(indexFile(runs))).toBe(true);
    for (const damage of ['{"version":1,"folders":{"a":{"signa', 'not json', '{"version":99,"folders":{}}', '']) {
      fs.writeFileSync(indexFile(runs), damage);
      expect(await tasksOf(runs)).toEqual(expected);
      expect(JSON.parse(fs.readFileSync(indexFile(runs), 'utf8'))).toMatchObject({ version: 1 });
    }
  });

  it('written by two processes at once and killed at any moment, is always a whole index or none', async () => {
    const runs = await folderOfRuns({ a: 'task a', b: 'task b' });
    const expected = await tasksOf(runs);
    // Each writer saves the index over and over, each time with a folder it changed, as fast as it can.
    const writer = `
      import { RunsIndex } from ${JSON.stringify(path.join(REPO, 'src/runtime/runs-index.ts'))};
      for (let n = 0; ; n++) {
        const index = RunsIndex.load(process.argv[1]);
        index.set('noise-' + process.pid, 'sig-' + n, [{ archivedJournal: null, summary: { runId: 'x', problem: null, filler: 'y'.repeat(20000) } }]);
        index.save();
      }`;
    for (let round = 0; round < 3; round++) {
      const writers = [0, 1].map(() => spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', writer, runs.root], { cwd: REPO, stdio: 'ignore' }));
      const deadline = Date.now() + 1500;
      let reads = 0;
      while (Date.now() < deadline) {
        const text = fs.readFileSync(indexFile(runs), 'utf8');
        expect(() => JSON.parse(text)).not.toThrow();
        reads++;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(reads).toBeGreaterThan(0);
      for (const child of writers) child.kill('SIGKILL');
      await Promise.all(writers.map((child) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('exit', resolve)))));
      expect(() => JSON.parse(fs.readFileSync(indexFile(runs), 'utf8'))).not.toThrow();
      expect(await tasksOf(runs)).toEqual(expected);
    }
  }, 60_000);
});
