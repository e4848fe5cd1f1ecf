/**
 * forkRun on both stores: the child starts from the parent's state at a record, under its own
 * run id (so its tools get idempotency keys of their own), names its parent, and never changes
 * it. A side effect the parent did after the fork point is listed, never reused by the child:
 * the child's resume settles the call by the rules of a resume (unknown, or verify).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ForkRefusedError } from '../../src/fork/fork-errors.ts';
import { readForkNotes } from '../../src/fork/fork-notes.ts';
import { forkRun } from '../../src/fork/fork-run.ts';
import { endTurnReply, scriptedModel, type ScriptedStep, toolUseReply } from '../../src/model/scripted-model.ts';
import { ContinueRefusedError } from '../../src/core/continue-run.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { readRunHistory, readRunStatus } from '../../src/runtime/run-status.ts';
import { StoreCorruptError, StoreWriteError } from '../../src/store/errors.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import type { RunStore } from '../../src/store/store.ts';
import { idempotencyKeyFor } from '../../src/tools/execute-call.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const STORES: Array<[string, () => RunStore]> = [
  ['MemoryStore', () => new MemoryStore()],
  ['FileStore', () => new FileStore(path.join(tempDir(), '.durable-agent'))],
];

/** Turn 1 sends an email (a side effect with no verify), turn 2 charges a card (one that can verify), then done. */
const SCRIPT: ScriptedStep[] = [
  toolUseReply([{ id: 't1', name: 'send_email', input: { to: 'ann@example.com' } }]),
  toolUseReply([{ id: 't2', name: 'charge_card', input: { amount: 5 } }]),
  endTurnReply('all done'),
];

async function finishedParent(store: RunStore) {
  const tools = countingTools();
  const result = await startRun({ store, model: scriptedModel(SCRIPT, { afterScript: (m) => endTurnReply(`re: ${String(m[m.length - 1]!.content)}`) }), tools: tools.tools, task: 'the task', maxTurns: 5 });
  expect(result.status).toBe('done');
  return { tools, runId: (await store.load()).header.runId };
}

async function seqOf(store: RunStore, point: string, nth = 1): Promise<number> {
  const steps = (await readRunHistory(store)).filter((step) => step.point === point);
  return steps[nth - 1]!.seq;
}

describe.each(STORES)('forkRun (%s)', (_name, newStore) => {
  it('by default at the last resting point: a new run id, the parent named, the parent unchanged', async () => {
    const parent = newStore();
    const { runId } = await finishedParent(parent);
    const before = JSON.stringify(await parent.load());
    const child = newStore();
    const forked = await forkRun({ from: parent, to: child });
    const last = (await parent.load()).records.length - 1;
    expect(forked).toMatchObject({ state: 'done', records: last + 1, parentLastSeq: last, openCalls: [], afterFork: [] });
    expect(forked.forkedFrom).toMatchObject({ runId, seq: last, location: parent.location });
    expect(forked.runId).not.toBe(runId);
    const loaded = await child.load();
    expect(loaded.header.runId).toBe(forked.runId);
    expect(loaded.header.forkedFrom).toEqual(forked.forkedFrom);
    expect(loaded.records.map((r) => r.record)).toEqual((await parent.load()).records.map((r) => r.record));
    expect(JSON.stringify(await parent.load())).toBe(before);
    const status = await readRunStatus(child);
    expect(status).toMatchObject({ state: 'done', finalText: 'all done', forkedFrom: { runId, seq: last } });
  });

  it('at an open turn: the side effect the parent did after the fork point is listed, and the child does not reuse it', async () => {
    const parent = newStore();
    const { tools, runId } = await finishedParent(parent);
    const at = await seqOf(parent, 'save-a', 1); // checkpoint A of turn 1: send_email t1 open
    const child = newStore();
    const forked = await forkRun({ from: parent, to: child, at });
    expect(forked.state).toBe('pendingTool');
    expect(forked.openCalls).toEqual([{ id: 't1', name: 'send_email' }]);
    expect(forked.afterFork).toEqual([
      { tool_use_id: 't1', name: 'send_email', input: '{"to":"ann@example.com"}', effect: 'side-effect', outcome: 'ran', openAtFork: true },
      { tool_use_id: 't2', name: 'charge_card', input: '{"amount":5}', effect: 'side-effect', outcome: 'ran', openAtFork: false },
    ]);
    expect(tools.counter.of('t1')).toBe(1);

    const events: string[] = [];
    const resumed = await resumeRun({
      store: child,
      model: scriptedModel(SCRIPT),
      tools: tools.tools,
      observer: (event) => {
        if (event.type === 'reconciled') events.push(`${event.call.id}:${event.decision}`);
      },
    });
    expect(resumed.status).toBe('done');
    // t1 ran once, in the parent: the child reported its state unknown instead of reusing or repeating it.
    expect(events).toEqual(['t1:unknown-reported']);
    expect(tools.counter.of('t1')).toBe(1);
    // t2 is the child's own call: it ran under the child's key, which the parent's charge does not match.
    expect(tools.counter.of('t2')).toBe(2);
    const childRunId = (await child.load()).header.runId;
    expect(tools.charged).toEqual(new Set([idempotencyKeyFor(runId, 't2'), idempotencyKeyFor(childRunId, 't2')]));
    const ledger = foldJournal(child.location, await child.load()).ledger;
    expect(ledger.get('t1')?.kind).toBe('unknown');
  });

  it('at a ledger write inside a turn: the entries up to the fork point are reused, a miss after it follows the rules', async () => {
    const parent = newStore();
    const tools = countingTools();
    const script: ScriptedStep[] = [
      toolUseReply([
        { id: 'r1', name: 'lookup', input: { q: 'a' } },
        { id: 'r2', name: 'send_email', input: { to: 'bo@example.com' } },
        { id: 'r3', name: 'lookup', input: { q: 'b' } },
      ]),
      endTurnReply('done'),
    ];
    await startRun({ store: parent, model: scriptedModel(script), tools: tools.tools, task: 'the task', maxTurns: 5 });
    const at = await seqOf(parent, 'effect-write', 1); // r1 recorded; r2 and r3 open
    const child = newStore();
    const forked = await forkRun({ from: parent, to: child, at });
    expect(forked.openCalls).toEqual([
      { id: 'r2', name: 'send_email' },
      { id: 'r3', name: 'lookup' },
    ]);
    expect(forked.afterFork.map((call) => [call.tool_use_id, call.effect, call.outcome])).toEqual([
      ['r2', 'side-effect', 'ran'],
      ['r3', 'read-only', 'ran'],
    ]);
    const events: string[] = [];
    const resumed = await resumeRun({ store: child, model: scriptedModel(script), tools: tools.tools, observer: (event) => void (event.type === 'reconciled' && events.push(`${event.call.id}:${event.decision}`)) });
    expect(resumed.status).toBe('done');
    expect(events).toEqual(['r1:reused', 'r2:unknown-reported', 'r3:re-ran-read-only']);
    expect([tools.counter.of('r1'), tools.counter.of('r2'), tools.counter.of('r3')]).toEqual([1, 1, 2]);
  });

  it("a call that can verify is checked under the child's key: the parent's effect is not the child's", async () => {
    const parent = newStore();
    const { tools, runId } = await finishedParent(parent);
    const at = await seqOf(parent, 'save-a', 2); // charge_card t2 open
    const child = newStore();
    await forkRun({ from: parent, to: child, at });
    const events: string[] = [];
    await resumeRun({ store: child, model: scriptedModel(SCRIPT), tools: tools.tools, observer: (event) => void (event.type === 'reconciled' && events.push(`${event.call.id}:${event.decision}`)) });
    expect(events).toEqual(['t2:verified-not-done-ran']);
    const childKey = idempotencyKeyFor((await child.load()).header.runId, 't2');
    expect(childKey).not.toBe(idempotencyKeyFor(runId, 't2'));
    expect(tools.counter.keys.get('t2')).toBe(childKey);
  });

  it('--message at a done point continues the conversation in the child; elsewhere it is refused and nothing is written', async () => {
    const parent = newStore();
    const { tools } = await finishedParent(parent);
    const child = newStore();
    const forked = await forkRun({ from: parent, to: child, message: 'and a summary?' });
    expect(forked.state).toBe('awaitingModel');
    const resumed = await resumeRun({ store: child, model: scriptedModel(SCRIPT, { afterScript: (m) => endTurnReply(`re: ${String(m[m.length - 1]!.content)}`) }), tools: tools.tools });
    expect(resumed).toMatchObject({ status: 'done', text: 're: and a summary?' });
    expect((await readRunStatus(child)).continued).toMatchObject([{ message: 'and a summary?' }]);

    const other = newStore();
    const at = await seqOf(parent, 'save-a', 1);
    const refusal = await forkRun({ from: parent, to: other, at, message: 'hi' }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ForkRefusedError);
    expect((refusal as ForkRefusedError).problem).toBe('message-not-allowed');
    expect((refusal as Error).message).toMatch(new RegExp(`record ${at} is not a finished conversation .*the last such record is \\d+`));
    expect(await other.exists()).toBe(false);
    await expect(forkRun({ from: parent, to: other, message: '  ' })).rejects.toBeInstanceOf(ContinueRefusedError);
    expect(await other.exists()).toBe(false);
  });

  it('refuses a record that does not exist, a target that holds a run, and the run itself', async () => {
    const parent = newStore();
    await finishedParent(parent);
    const last = (await parent.load()).records.length - 1;
    const other = newStore();
    await expect(forkRun({ from: parent, to: other, at: last + 1 })).rejects.toThrow(`record ${last + 1} does not exist: the run has records 0 to ${last}`);
    await forkRun({ from: parent, to: other, at: 0 });
    const again = await forkRun({ from: parent, to: other }).catch((error: unknown) => error);
    expect((again as ForkRefusedError).problem).toBe('target-holds-run');
    expect((await other.load()).records).toHaveLength(1);
    await expect(forkRun({ from: parent, to: parent })).rejects.toMatchObject({ problem: 'same-run' });
  });
});

describe('forkRun (FileStore only)', () => {
  it('takes directories, notes the child beside the parent (never in its journal), and the child names its parent', async () => {
    const parentDir = tempDir();
    const parent = new FileStore(path.join(parentDir, '.durable-agent'));
    const { runId } = await finishedParent(parent);
    const bytes = fs.readFileSync(parent.journalPath);
    const childDir = path.join(tempDir(), 'child');
    const forked = await forkRun({ from: parentDir, to: childDir, at: 3 });
    expect(fs.readFileSync(parent.journalPath).equals(bytes)).toBe(true);
    expect(forked.lineageNoteProblem).toBeNull();
    expect(readForkNotes(parent.dir, runId)).toMatchObject([{ parent: runId, seq: 3, child: { runId: forked.runId, location: path.join(childDir, '.durable-agent') } }]);
    expect((await readRunStatus(parent)).forks).toMatchObject([{ seq: 3, child: { runId: forked.runId } }]);
    const history = await readRunHistory(new FileStore(path.join(childDir, '.durable-agent')));
    expect(history).toHaveLength(4);
  });

  it('a parent whose last record was cut off by a crash is forked from the records before it, and left as it was', async () => {
    const parentDir = tempDir();
    const parent = new FileStore(path.join(parentDir, '.durable-agent'));
    await finishedParent(parent);
    fs.appendFileSync(parent.journalPath, '0123abcd {"seq":99,"at":1,"sta');
    const bytes = fs.readFileSync(parent.journalPath);
    const childDir = path.join(tempDir(), 'child');
    const forked = await forkRun({ from: parentDir, to: childDir });
    expect(forked).toMatchObject({ state: 'done', records: forked.parentLastSeq + 1 });
    expect(fs.readFileSync(parent.journalPath).equals(bytes)).toBe(true);
    expect((await new FileStore(path.join(childDir, '.durable-agent')).load()).tornTail).toBeNull();
  });

  it('a damaged parent is refused and nothing is written', async () => {
    const parentDir = tempDir();
    const parent = new FileStore(path.join(parentDir, '.durable-agent'));
    await finishedParent(parent);
    const text = fs.readFileSync(parent.journalPath, 'utf8').split('\n');
    text[4] = text[4]!.replace('"seq":', '"seq" :');
    fs.writeFileSync(parent.journalPath, text.join('\n'));
    const childDir = path.join(tempDir(), 'child');
    await expect(forkRun({ from: parentDir, to: childDir })).rejects.toBeInstanceOf(StoreCorruptError);
    expect(fs.existsSync(path.join(childDir, '.durable-agent', 'journal.jsonl'))).toBe(false);
  });

  it('a write that fails half-way (fork-write) leaves no child, and the next fork goes through', async () => {
    const parentDir = tempDir();
    await finishedParent(new FileStore(path.join(parentDir, '.durable-agent')));
    const childDir = path.join(tempDir(), 'child');
    const failing = new FileStore(path.join(childDir, '.durable-agent'), { writeFaults: 'fork-write:1' });
    await expect(forkRun({ from: parentDir, to: failing })).rejects.toBeInstanceOf(StoreWriteError);
    expect(fs.readdirSync(path.join(childDir, '.durable-agent')).filter((name) => name.startsWith('journal'))).toEqual([]);
    const forked = await forkRun({ from: parentDir, to: childDir });
    expect(forked.state).toBe('done');
  });
});

describe('forking a run with compaction', () => {
  it("the child keeps the parent's pinned compaction: its resume compacts as the parent did, and finishes", async () => {
    const page = defineTool<{ n: number }>({
      name: 'read_page',
      description: 'reads page n',
      inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      readOnly: true,
      run: ({ n }) => `page ${n}: ${'lorem ipsum '.repeat(170)}`,
    });
    const turns = 60;
    const steps: ScriptedStep[] = Array.from({ length: turns }, (_, i) => toolUseReply([{ id: `toolu_${i + 1}`, name: 'read_page', input: { n: i + 1 } }]));
    steps.push(endTurnReply('read them all'));
    const model = () => scriptedModel(steps, { contextWindow: 5_000 });
    const parentDir = tempDir();
    const parent = await startRun({ store: new FileStore(path.join(parentDir, '.durable-agent')), model: model(), tools: [page], task: 'read', maxTurns: 30, compaction: { mode: 'client', contextWindow: 5_000 } });
    expect(parent.status).toBe('stoppedAtMaxTurns');
    const childDir = path.join(tempDir(), 'child');
    await forkRun({ from: parentDir, to: childDir });
    const child = new FileStore(path.join(childDir, '.durable-agent'));
    expect((await child.load()).header).toMatchObject({ version: 3, compaction: { mode: 'client', contextWindow: 5_000, triggerRatio: 0.8 } });
    const timesAtFork = foldJournal(childDir, await child.load()).context.compacted!.times;
    const resumed = await resumeRun({ store: child, model: model(), tools: [page], maxTurns: turns + 1 });
    expect(resumed).toMatchObject({ status: 'done', turn: turns, text: 'read them all' });
    expect(foldJournal(childDir, await child.load()).context.compacted!.times).toBeGreaterThan(timesAtFork);
  });
});
