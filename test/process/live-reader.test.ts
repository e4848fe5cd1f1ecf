/**
 * status, history and viz take no lock: they read a run while another process writes it. Each
 * read must see a consistent prefix of the journal (every record the commit mark counts), never
 * call a live journal damaged. The writer here is a real process appending thousands of records
 * with fdatasync; the readers run in this process in a loop and as real CLI processes.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import { readRunHistory, readRunStatus } from '../../src/runtime/run-status.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { machineGraphOf } from '../../visualizer/machine-graph.ts';
import { runViewOf } from '../../visualizer/run-timeline.ts';
import { type CliRun, REPO, runCliAsync } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const TURNS = 3000;
const FIXTURE = path.join(REPO, 'test', 'fixtures', 'long-run.ts');
const TSX = pathToFileURL(createRequire(path.join(REPO, 'package.json')).resolve('tsx')).href;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('reading a run while another process writes it', () => {
  it('status, history and viz never call a live journal damaged, and each read is a prefix of the next', { timeout: 240_000 }, async () => {
    const dir = tempDir();
    const store = new FileStore(path.join(dir, '.durable-agent'));
    const writer = spawn(process.execPath, ['--import', TSX, FIXTURE, dir, String(TURNS)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let writerOutput = '';
    writer.stdout.setEncoding('utf8').on('data', (chunk: string) => (writerOutput += chunk));
    writer.stderr.setEncoding('utf8').on('data', (chunk: string) => (writerOutput += chunk));
    let writing = true;
    const written = new Promise<number | null>((resolve) =>
      writer.on('close', (code) => {
        writing = false;
        resolve(code);
      }),
    );
    while (writing && !(await store.exists())) await pause(5);

    // Real commands, one after the other, for as long as the run goes on.
    const commands: Array<{ args: string[]; run: CliRun }> = [];
    const cliReaders = (async () => {
      const kinds = [['status'], ['history'], ['viz', '--out', path.join(dir, 'viz.html')]];
      for (let i = 0; writing; i++) {
        const args = [...kinds[i % kinds.length]!, '--dir', dir];
        commands.push({ args, run: await runCliAsync(args, { cwd: dir }) });
      }
    })();

    // The same reads in this process, as fast as they go.
    const graph = machineGraphOf(agentLoopMachine);
    const failures: string[] = [];
    let reads = 0;
    let seen = 0;
    while (writing) {
      const readers: Array<[string, () => Promise<number>]> = [
        ['status', async () => (await readRunStatus(store)).records],
        ['history', async () => (await readRunHistory(store)).length],
        ['viz', async () => runViewOf(store.location, await store.load(), graph).steps.length],
      ];
      for (const [what, read] of readers) {
        try {
          const records = await read();
          if (records < seen) failures.push(`${what} saw ${records} records after a read saw ${seen}`);
          seen = Math.max(seen, records);
          reads += 1;
        } catch (error) {
          failures.push(`${what}: ${(error as Error).message}`);
        }
      }
      await pause(0);
    }
    expect(await written, writerOutput).toBe(0);
    await cliReaders;

    console.log(`[live reads] ${reads} reads in this process and ${commands.length} CLI commands while ${seen}+ records were written`);
    expect(failures.slice(0, 5)).toEqual([]);
    const refused = commands.filter((c) => c.run.code !== 0).map((c) => `${c.args[0]}: exit ${c.run.code}: ${c.run.stderr.trim()}`);
    expect(refused.slice(0, 5)).toEqual([]);
    expect(reads).toBeGreaterThan(30);
    expect(commands.length).toBeGreaterThanOrEqual(3);
    // The finished run reads whole: every turn, nothing left over.
    const final = await readRunStatus(store);
    expect(final).toMatchObject({ state: 'done', turn: TURNS, tornTail: null });
    expect(fs.existsSync(path.join(dir, 'viz.html'))).toBe(true);
  });
});
