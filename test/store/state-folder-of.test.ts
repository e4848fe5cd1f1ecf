/**
 * One state folder for a program and the command line: the folder a program names keeps its runs
 * in DIR/.durable-agent, where every command reads them with --dir DIR. A folder that already
 * holds runs as a state folder does (as a program that named its state folder itself kept them)
 * is read and resumed where it is: nothing moved, nothing made beside it, no run started again.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileRuns, FileStore, resumeRun, startRun } from '../../src/index.ts';
import { listRuns } from '../../src/fleet/list-runs.ts';
import { StateFolderRuns } from '../../src/store/file-runs.ts';
import { RunFolderStore } from '../../src/store/file-store.ts';
import { folderOfState, stateFolderOf } from '../../src/store/state-folder-of.ts';
import { endTurnReply, scriptedModel, SimulatedCrash, toolUseReply } from '../../src/testing.ts';
import { runCli } from '../helpers/cli.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

/** One invoice, sent by a tool that cannot be checked afterwards: sending it twice is the bug. */
const invoiceScript = () => [toolUseReply([{ id: 'toolu_send', name: 'send_email', input: { to: 'billing@example.com' } }]), endTurnReply('invoice sent')];
const TASK = 'Send the invoice';

/** Every file under `dir` with its bytes: what a folder held, to compare with what it holds after. */
function snapshotOf(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    files.set(path.relative(dir, file), fs.readFileSync(file, 'base64'));
  }
  return files;
}

describe('a folder a program names', () => {
  it('keeps its runs in DIR/.durable-agent (by id under runs/), where list and status find them with --dir DIR', async () => {
    const dir = tempDir();
    const { tools } = countingTools();
    const byId = await startRun({ store: new FileRuns(dir).store('invoice-acme'), model: scriptedModel(invoiceScript()), tools, task: TASK });
    const own = await startRun({ store: new FileStore(dir), model: scriptedModel(invoiceScript()), tools, task: TASK });
    expect([byId.status, own.status]).toEqual(['done', 'done']);
    expect(fs.existsSync(path.join(dir, '.durable-agent', 'runs', 'invoice-acme', 'journal.jsonl'))).toBe(true);
    expect(fs.existsSync(path.join(dir, '.durable-agent', 'journal.jsonl'))).toBe(true);
    expect(fs.readdirSync(dir)).toEqual(['.durable-agent']);

    const list = runCli(['list', '--dir', dir], { cwd: dir });
    expect(list.stderr).toBe('');
    expect(list.stdout).toMatch(/^invoice-acme\s+done\s+Send the invoice/m);
    expect(list.stdout.trimEnd().split('\n').at(-1)).toBe(`2 runs in ${path.join(dir, '.durable-agent')}`);
    expect(runCli(['status', '--dir', dir, '--run', 'invoice-acme'], { cwd: dir }).code).toBe(0);
    expect(runCli(['status', '--dir', dir], { cwd: dir }).code).toBe(0);
    // With no flags, from the folder itself, as a user types it.
    expect(runCli(['list'], { cwd: dir }).stdout).toMatch(/^invoice-acme\s+done/m);
  });

  it('named .durable-agent is the state folder itself; its folder is the one to name', () => {
    const dir = tempDir();
    const state = path.join(dir, '.durable-agent');
    expect(stateFolderOf(dir)).toBe(state);
    expect(stateFolderOf(state)).toBe(state);
    expect(new FileRuns(state).root).toBe(state);
    expect(new FileStore(state).dir).toBe(state);
    expect(folderOfState(state)).toBe(dir);
    expect(folderOfState(dir)).toBe(dir);
  });

  it("is not taken for a state folder for a journal.jsonl or a runs/ of the program's own", () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'journal.jsonl'), '{"day":1,"note":"not a run"}\n');
    fs.mkdirSync(path.join(dir, 'runs', 'experiment-1'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'runs', 'experiment-1', 'journal.jsonl'), 'loss 0.3\n');
    expect(stateFolderOf(dir)).toBe(path.join(dir, '.durable-agent'));
    expect(new FileRuns(dir).store('a').dir).toBe(path.join(dir, '.durable-agent', 'runs', 'a'));
  });
});

describe('a folder that holds runs as a state folder does (the layout a program got by naming its state folder itself)', () => {
  /** A finished run and a run killed right after its invoice was sent and recorded, by id in `dir` itself, as FileRuns(dir) kept them before. */
  async function olderFolder() {
    const dir = tempDir();
    const counting = countingTools();
    const runs = new StateFolderRuns(dir);
    await startRun({ store: runs.store('invoice-done'), model: scriptedModel(invoiceScript()), tools: counting.tools, task: TASK });
    await expect(
      startRun({ store: runs.store('invoice-killed'), model: scriptedModel(invoiceScript()), tools: counting.tools, task: TASK, crashAfter: 'after-effect-write:1' }),
    ).rejects.toThrow(SimulatedCrash);
    expect(counting.counter.of('toolu_send')).toBe(2);
    return { dir, counting };
  }

  it('is read where it is: listed, the finished run answers from its journal, the killed one resumes in place without sending again', async () => {
    const { dir, counting } = await olderFolder();
    const before = snapshotOf(dir);
    const runs = new FileRuns(dir);
    expect(runs.root).toBe(dir);
    expect((await listRuns(runs)).map((run) => [run.runId, run.state]).sort()).toEqual([
      ['invoice-done', 'done'],
      ['invoice-killed', 'effectRecorded'],
    ]);
    // Listing wrote nothing.
    expect(snapshotOf(dir)).toEqual(before);

    const answered = await startRun({ store: runs.store('invoice-done'), model: scriptedModel([]), tools: counting.tools, task: TASK });
    expect([answered.status, answered.text]).toEqual(['done', 'invoice sent']);
    const resumed = await startRun({ store: new FileRuns(dir).store('invoice-killed'), model: scriptedModel(invoiceScript()), tools: counting.tools, task: TASK });
    expect([resumed.status, resumed.text]).toEqual(['done', 'invoice sent']);
    expect(counting.counter.of('toolu_send')).toBe(2);

    // The same journals where they were: the finished one untouched, the killed one the same run (its header) gone on; no state folder made inside.
    expect(fs.existsSync(path.join(dir, '.durable-agent'))).toBe(false);
    const after = snapshotOf(dir);
    const done = path.join('runs', 'invoice-done', 'journal.jsonl');
    const killed = path.join('runs', 'invoice-killed', 'journal.jsonl');
    expect(after.get(done)).toBe(before.get(done));
    const headerOf = (bytes: string | undefined) => Buffer.from(bytes!, 'base64').toString('utf8').split('\n')[0];
    expect(headerOf(after.get(killed))).toBe(headerOf(before.get(killed)));
  });

  it('is read by the command line with --dir: list shows its runs, status exits 0, and nothing is written', async () => {
    const { dir } = await olderFolder();
    const before = snapshotOf(dir);
    const list = runCli(['list', '--dir', dir], { cwd: dir });
    expect(list.stderr).toBe('');
    expect(list.stdout).toMatch(/^invoice-done\s+done/m);
    expect(list.stdout).toMatch(/^invoice-killed\s+effectRecorded/m);
    expect(list.stdout.trimEnd().split('\n').at(-1)).toBe(`2 runs in ${dir}`);
    const status = runCli(['status', '--dir', dir, '--run', 'invoice-done'], { cwd: dir });
    expect(status.stderr).toBe('');
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('invoice sent');
    expect(snapshotOf(dir)).toEqual(before);
    expect(fs.existsSync(path.join(dir, '.durable-agent'))).toBe(false);
  });

  it("a folder's own run (as FileStore(dir) kept it) resumes in place", async () => {
    const dir = tempDir();
    const counting = countingTools();
    await expect(startRun({ store: new RunFolderStore(dir), model: scriptedModel(invoiceScript()), tools: counting.tools, task: TASK, crashAfter: 'after-effect-write:1' })).rejects.toThrow(SimulatedCrash);
    const store = new FileStore(dir);
    expect(store.dir).toBe(dir);
    const resumed = await resumeRun({ store, model: scriptedModel(invoiceScript()), tools: counting.tools });
    expect([resumed.status, counting.counter.of('toolu_send')]).toEqual(['done', 1]);
    expect(runCli(['status', '--dir', dir], { cwd: dir }).code).toBe(0);
    expect(fs.existsSync(path.join(dir, '.durable-agent'))).toBe(false);
  });

  it('is not read when the folder has a .durable-agent/ of its own: that one is the state folder', async () => {
    const { dir } = await olderFolder();
    fs.mkdirSync(path.join(dir, '.durable-agent'));
    expect(stateFolderOf(dir)).toBe(path.join(dir, '.durable-agent'));
    expect(folderOfState(path.join(dir, '.durable-agent'))).toBe(dir);
  });
});
