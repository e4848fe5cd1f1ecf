/**
 * Snapshot records under real processes: a writer that writes a snapshot at every synced record
 * (DURABLE_AGENT_SNAPSHOT_EVERY=1), so that a SIGKILL at a random moment lands while one is
 * written; the run resumes from what is on disk and finishes, losing nothing. And readers that
 * take no lock (status, history, a load from the last snapshot) read it while it is written.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { resumeRun } from '../../src/runtime/run-api.ts';
import { readRunHistory, readRunStatus } from '../../src/runtime/run-status.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { snapshotContextOf } from '../../src/store/journal/journal-codec.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const FIXTURE = path.join(REPO, 'test', 'fixtures', 'long-run.ts');
const TSX = pathToFileURL(createRequire(path.join(REPO, 'package.json')).resolve('tsx')).href;
const TURNS = 300;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The long-run fixture's script, for the resume. */
function script() {
  const steps = Array.from({ length: TURNS }, (_, n) => toolUseReply([{ id: `toolu_${n}`, name: 'lookup', input: { q: `question ${n}` } }]));
  return [...steps, endTurnReply('all looked up')];
}

function startWriter(dir: string) {
  const writer = spawn(process.execPath, ['--import', TSX, FIXTURE, dir, String(TURNS)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DURABLE_AGENT_SNAPSHOT_EVERY: '1' },
  });
  let output = '';
  writer.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  writer.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => writer.on('close', (code, signal) => resolve({ code, signal })));
  return { writer, closed, output: () => output };
}

async function recordsOf(store: FileStore): Promise<number> {
  try {
    return (await store.load()).records.length;
  } catch {
    return 0;
  }
}

describe('snapshot records with real processes', () => {
  it('SIGKILL while snapshots are written (one at every synced record): the resume goes on from the disk and loses nothing', { timeout: 240_000 }, async () => {
    for (const killAt of [37, 150, 411]) {
      const dir = tempDir();
      const store = new FileStore(path.join(dir, '.durable-agent'));
      const { writer, closed, output } = startWriter(dir);
      while ((await recordsOf(store)) < killAt) {
        if (writer.exitCode !== null) throw new Error(`the writer ended early: ${output()}`);
        await pause(2);
      }
      writer.kill('SIGKILL');
      expect((await closed).signal).toBe('SIGKILL');

      const whole = await store.load();
      const recordedBefore = foldJournal(store.location, whole).ledger.size;
      const fromSnapshot = await store.load({ fromLastSnapshot: true });
      expect(fromSnapshot.records[0]!.record.snapshot, 'the read starts at a snapshot').toBeDefined();
      expect(snapshotContextOf(foldJournal(store.location, fromSnapshot))).toEqual(snapshotContextOf(foldJournal(store.location, whole)));

      const { tools, counter } = countingTools();
      const result = await resumeRun({ store, model: scriptedModel(script()), tools, maxTurns: TURNS + 1 });
      store.close();
      expect(result.status).toBe('done');
      expect(result.text).toBe('all looked up');
      // Every lookup is answered in the conversation, once, in order: nothing was lost or repeated.
      const messages = foldJournal(store.location, await store.load()).context.messages;
      const answered = messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id)));
      expect(answered).toEqual(Array.from({ length: TURNS }, (_, n) => `toolu_${n}`));
      // The resumed process ran exactly the calls the killed one had not recorded, each once.
      expect(counter.runs.size).toBe(TURNS - recordedBefore);
      for (const runs of counter.runs.values()) expect(runs).toBe(1);
    }
  });

  it('status, history and a load from the last snapshot read a run while snapshots are written', { timeout: 240_000 }, async () => {
    const dir = tempDir();
    const store = new FileStore(path.join(dir, '.durable-agent'));
    const { closed, output } = startWriter(dir);
    let writing = true;
    void closed.then(() => (writing = false));
    while (writing && !(await store.exists())) await pause(5);
    const failures: string[] = [];
    let seen = 0;
    let reads = 0;
    while (writing) {
      try {
        const status = await readRunStatus(store);
        const history = await readRunHistory(store);
        const partial = await store.load({ fromLastSnapshot: true });
        const view = foldJournal(store.location, partial);
        const last = partial.records[partial.records.length - 1]!.record.seq;
        if (last + 1 < seen) failures.push(`a load from the last snapshot ended at record ${last} after a read saw ${seen} records`);
        if (history.length < status.records) failures.push(`history saw ${history.length} records after status saw ${status.records}`);
        if (view.context.turn < status.turn) failures.push(`the load from the snapshot is at turn ${view.context.turn}, before status's ${status.turn}`);
        seen = Math.max(seen, history.length);
        reads += 1;
      } catch (error) {
        failures.push((error as Error).message);
      }
      await pause(0);
    }
    expect((await closed).code, output()).toBe(0);
    expect(failures).toEqual([]);
    expect(reads).toBeGreaterThan(3);
    const whole = await store.load();
    expect(whole.records.filter((stored) => stored.record.snapshot).length).toBeGreaterThan(TURNS);
  });
});
