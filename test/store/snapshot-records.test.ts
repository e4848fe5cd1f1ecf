/**
 * Snapshot records: a resume that reads only from the last snapshot gets exactly the state a
 * fold of the whole journal gives (and an older release, which ignores the mark, too); a
 * snapshot that does not belong where it stands is refused, never trusted; the process keeps
 * only the ledger entries its live context refers to.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import { machineGraphOf } from '../../visualizer/machine-graph.ts';
import { runViewOf } from '../../visualizer/run-timeline.ts';
import { endTurnReply, scriptedModel, type ScriptedStep, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { readRunHistory, readRunStatus } from '../../src/runtime/run-status.ts';
import { resumeRun, startRun, type StartOptions } from '../../src/runtime/run-api.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { SnapshotEveryError, snapshotEveryOf, SNAPSHOT_EVERY_ENV, SnapshotPolicy, snapshotsAtEvent } from '../../src/runtime/snapshot-policy.ts';
import { StoreCorruptError } from '../../src/store/errors.ts';
import { FileStore, JOURNAL_FILE } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { frameLine } from '../../src/store/journal/framing.ts';
import { type DurableView, applyRecord, snapshotContextOf } from '../../src/store/journal/journal-codec.ts';
import type { JournalRecord } from '../../src/store/journal/journal-record.ts';
import { readJournal } from '../../src/store/journal/journal-reader.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import type { RunStore } from '../../src/store/store.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

/** A small deterministic generator, so a failing journal can be written again from its seed. */
function random(seed: number): (n: number) => number {
  let state = seed * 2654435761 + 1;
  return (n) => {
    state = (state * 1103515245 + 12345) >>> 0;
    return state % n;
  };
}

const TOOLS = ['lookup', 'send_email', 'charge_card', 'explode'] as const;

/** A run of 1 to 12 turns, each with 1 to 3 calls to the counting tools. */
function generatedScript(pick: (n: number) => number): ScriptedStep[] {
  const steps: ScriptedStep[] = [];
  const turns = 1 + pick(12);
  for (let turn = 1; turn <= turns; turn++) {
    const calls = Array.from({ length: 1 + pick(3) }, (_, i) => {
      const name = TOOLS[pick(TOOLS.length)]!;
      const input = name === 'lookup' ? { q: `q${turn}.${i}` } : name === 'send_email' ? { to: `p${turn}` } : name === 'charge_card' ? { amount: turn } : {};
      return { id: `t${turn}_${i}`, name, input };
    });
    steps.push(toolUseReply(calls, `turn ${turn}`));
  }
  steps.push(endTurnReply('all done'));
  return steps;
}

function stripped(record: JournalRecord): JournalRecord {
  const { snapshot: _mark, ...rest } = record;
  return rest;
}

/** What an older release makes of the journal: it ignores the snapshot mark and folds every record. */
function legacyFold(records: readonly JournalRecord[]): DurableView {
  let view: DurableView | null = null;
  for (const record of records) view = applyRecord(view, stripped(record));
  return view!;
}

async function expectSameResume(store: RunStore): Promise<void> {
  const whole = await store.load();
  const full = foldJournal(store.location, whole);
  const fromSnapshot = await store.load({ fromLastSnapshot: true });
  const partial = foldJournal(store.location, fromSnapshot);
  const snapshots = whole.records.filter((stored) => stored.record.snapshot);
  // It starts at the last snapshot when there is one.
  expect(fromSnapshot.records[0]!.record.seq).toBe(snapshots.length ? snapshots[snapshots.length - 1]!.record.seq : 0);
  expect(fromSnapshot.records[fromSnapshot.records.length - 1]).toEqual(whole.records[whole.records.length - 1]);
  expect(partial.state).toBe(full.state);
  expect(snapshotContextOf(partial)).toEqual(snapshotContextOf(full));
  // The ledger a resume holds is part of the whole one, and holds every entry the live state refers to.
  for (const [id, outcome] of partial.ledger) expect(full.ledger.get(id)).toEqual(outcome);
  for (const id of [...full.context.pending.map((call) => call.id), ...full.context.results.map((o) => o.tool_use_id)]) {
    expect(partial.ledger.get(id)).toEqual(full.ledger.get(id));
  }
  const legacy = legacyFold(whole.records.map((stored) => stored.record));
  expect(legacy.state).toBe(full.state);
  expect(snapshotContextOf(legacy)).toEqual(snapshotContextOf(full));
}

const POINTS = ['save-a', 'tool-return', 'effect-write', 'save-b'] as const;

describe('a resume from the last snapshot equals a fold of the whole journal', () => {
  it.each([
    ['MemoryStore', () => new MemoryStore()],
    ['FileStore', () => new FileStore(path.join(tempDir(), '.durable-agent'))],
  ] as const)('over 60 generated runs, killed at a random point and resumed (%s)', async (_name, newStore) => {
    let snapshotsSeen = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const pick = random(seed);
      const script = generatedScript(pick);
      const turns = script.length - 1;
      const snapshotEvery = [1, 2, 3, 5, 7][pick(5)]!;
      const { tools, counter } = countingTools();
      const store = newStore();
      const crashAfter = `after-${POINTS[pick(POINTS.length)]}:${1 + pick(turns)}`;
      const base: StartOptions = { store, model: scriptedModel(script), tools, task: `seed ${seed}`, maxTurns: turns + 1, snapshotEvery, requireApproval: seed % 4 === 0 ? ['send_email'] : undefined, onDecision: () => ({ verdict: 'approved' }) };
      try {
        await startRun({ ...base, crashAfter });
      } catch (error) {
        if (!(error instanceof SimulatedCrash)) throw error;
      }
      await expectSameResume(store);
      if (store instanceof FileStore) store.close();
      const result = await resumeRun({ ...base, snapshotEvery: [1, 2, 4][pick(3)] });
      expect(result.status, `seed ${seed}`).toBe('done');
      const reference = await startRun({ ...base, store: new MemoryStore(), model: scriptedModel(script), tools: countingTools().tools });
      expect(result.turn, `seed ${seed}`).toBe(reference.turn);
      expect(result.text).toBe(reference.text);
      await expectSameResume(store);
      snapshotsSeen += (await store.load()).records.filter((stored) => stored.record.snapshot).length;
      // Nothing that had a side effect ran twice because the resume started from a snapshot.
      for (const [id, runs] of counter.runs) if (!id.startsWith('t0')) expect(runs, `seed ${seed} ${id}`).toBeLessThanOrEqual(2);
      if (store instanceof FileStore) store.close();
    }
    expect(snapshotsSeen).toBeGreaterThan(100);
  }, 240_000);
});

/** A finished FileStore run of `turns` turns with a snapshot every `every` records. */
async function fileRun(turns: number, every: number, observer?: (event: RunEvent) => void): Promise<{ store: FileStore; file: string }> {
  const store = new FileStore(path.join(tempDir(), '.durable-agent'));
  const { tools } = countingTools();
  const script = Array.from({ length: turns }, (_, t) => toolUseReply([{ id: `l${t}`, name: 'lookup', input: { q: `${t}` } }]));
  await startRun({ store, model: scriptedModel([...script, endTurnReply('done')]), tools, task: 't', maxTurns: turns, snapshotEvery: every, observer, crashAfter: `after-save-b:${turns - 1}` }).catch((error) => {
    if (!(error instanceof SimulatedCrash)) throw error;
  });
  store.close();
  return { store, file: path.join(store.dir, JOURNAL_FILE) };
}

/** Rewrites record `seq` of the journal with `change` applied, its line's checksum made right again. */
function rewriteRecord(file: string, seq: number, change: (record: JournalRecord) => void): void {
  const text = fs.readFileSync(file);
  const read = readJournal(file, text);
  const stored = read.records[seq]!;
  const record = structuredClone(stored.record);
  change(record);
  const line = frameLine(record);
  // Same length, so the commit mark stays true: only the snapshot's content is wrong.
  expect(line.length).toBe(stored.bytes);
  fs.writeFileSync(file, Buffer.concat([text.subarray(0, stored.offset), line, text.subarray(stored.offset + stored.bytes)]));
}

describe('a snapshot that does not belong is refused, never trusted', () => {
  it('a snapshot naming another record before it: resume, status and history refuse it and change nothing', async () => {
    const { store, file } = await fileRun(12, 5);
    const snapshots = (await store.load()).records.filter((stored) => stored.record.snapshot);
    expect(snapshots.length).toBeGreaterThan(0);
    const last = snapshots[snapshots.length - 1]!.record.seq;
    rewriteRecord(file, last, (record) => {
      record.snapshot!.after.crc = '00000000';
    });
    const before = fs.readFileSync(file);
    const { tools } = countingTools();
    const resume = resumeRun({ store, model: scriptedModel([endTurnReply('x')]), tools });
    await expect(resume).rejects.toThrow(StoreCorruptError);
    await expect(resume).rejects.toThrow(/snapshot record \d+ says it follows record \d+ with checksum 00000000/);
    await expect(readRunStatus(store)).rejects.toThrow(StoreCorruptError);
    await expect(readRunHistory(store)).rejects.toThrow(StoreCorruptError);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
  }, 60_000);

  it('a snapshot naming another record number before it is refused', async () => {
    const { store, file } = await fileRun(12, 5);
    const snapshots = (await store.load()).records.filter((stored) => stored.record.snapshot);
    const last = snapshots[snapshots.length - 1]!.record.seq;
    rewriteRecord(file, last, (record) => {
      // Another record of as many digits, so the line keeps its length.
      record.snapshot!.after.seq = last - 1 >= 10 ? last - 1 - (last - 1 >= 20 ? 10 : -10) : last - 2;
    });
    await expect(store.load({ fromLastSnapshot: true }).then((loaded) => foldJournal(store.location, loaded))).rejects.toThrow(StoreCorruptError);
  }, 60_000);

  it('a damaged snapshot line is refused like any damaged record', async () => {
    const { store, file } = await fileRun(12, 5);
    const loaded = await store.load();
    const snap = loaded.records.filter((stored) => stored.record.snapshot).pop()!;
    const bytes = fs.readFileSync(file);
    const at = snap.offset + snap.bytes - 5;
    bytes[at] = bytes[at]! ^ 0x01;
    fs.writeFileSync(file, bytes);
    await expect(store.load({ repair: true, fromLastSnapshot: true })).rejects.toThrow(StoreCorruptError);
    await expect(store.load()).rejects.toThrow(StoreCorruptError);
  }, 60_000);
});

describe('reading a journal with snapshots', () => {
  it('history, status and viz show every record, snapshots included', async () => {
    const { store } = await fileRun(12, 4);
    const whole = await store.load();
    const history = await readRunHistory(store);
    expect(history.map((step) => step.seq)).toEqual(whole.records.map((stored) => stored.record.seq));
    expect(whole.records.filter((stored) => stored.record.snapshot).length).toBeGreaterThan(3);
    const viz = runViewOf(store.location, whole, machineGraphOf(agentLoopMachine));
    expect(viz.steps.length).toBe(whole.records.length);
    expect(history[0]!.seq).toBe(0);
    const status = await readRunStatus(store);
    expect(status.records).toBe(whole.records.length);
    expect(status.ledgerEntries).toBe(11);
  }, 60_000);

  it('a cut-off end after a snapshot is recovered by the read from the snapshot, as by the whole read', async () => {
    const { store, file } = await fileRun(12, 4);
    fs.appendFileSync(file, '0123abcd {"seq":');
    const partial = await store.load({ fromLastSnapshot: true });
    const whole = await store.load();
    expect(partial.tornTail).toEqual(whole.tornTail);
    expect(partial.tornTail).not.toBeNull();
    expect(snapshotContextOf(foldJournal(file, partial))).toEqual(snapshotContextOf(foldJournal(file, whole)));
  }, 60_000);

  it('reads back in pieces smaller than a line the same records', async () => {
    const { file } = await fileRun(12, 4);
    const bytes = fs.readFileSync(file);
    const big = readJournal(file, bytes, { fromLastSnapshot: true });
    const tiny = readJournal(file, bytes, { fromLastSnapshot: true, pieceBytes: 7 });
    expect(tiny.records).toEqual(big.records);
    expect(big.records[0]!.record.snapshot).toBeDefined();
  });
});

describe('what the process keeps', () => {
  it('after a snapshot, the ledger it holds is what the live state refers to, not every entry of the run', async () => {
    const sizes: number[] = [];
    await fileRun(30, 5, (event) => {
      if (event.type === 'saved') sizes.push(event.ledgerEntries);
    });
    // Without compaction every result is still in the messages, so all are live: none is lost.
    expect(Math.max(...sizes)).toBe(29);
  }, 60_000);

  it('a record that shrinks the conversation (a compaction) is a snapshot, and the ledger shrinks with it', async () => {
    const store = new MemoryStore();
    const { tools } = countingTools();
    const script = Array.from({ length: 6 }, (_, t) => toolUseReply([{ id: `l${t}`, name: 'lookup', input: { q: `${t}` } }]));
    await startRun({ store, model: scriptedModel([...script, endTurnReply('done')]), tools, task: 't', maxTurns: 10, snapshotEvery: 0 });
    const whole = await store.load();
    expect(whole.records.some((stored) => stored.record.snapshot)).toBe(false);
    const view = foldJournal(store.location, whole);
    const last = whole.records[whole.records.length - 1]!.record;
    const policy = new SnapshotPolicy(0, whole.records[0]!.record, last);
    // What a compaction does to the conversation: the task, a summary, and the last turn.
    const messages = view.context.messages;
    const compacted = { ...view.context, messages: [messages[0]!, { role: 'user' as const, content: 'summary of turns 1-4' }, ...messages.slice(-3)] };
    const record = policy.encode(view, { seq: last.seq + 1, at: 1, event: 'REOPEN', state: view.state, context: compacted });
    expect(record.snapshot).toBeDefined();
    expect(record.snapshot!.after.seq).toBe(last.seq);
    const after = policy.durableAfter(record, view, view.state, compacted);
    expect(view.ledger.size).toBe(6);
    expect([...after.ledger.keys()]).toEqual(['l5']);
    // Folded from nothing, the snapshot gives the compacted state.
    expect(snapshotContextOf(applyRecord(null, record))).toEqual(snapshotContextOf({ ...view, context: compacted }));
    // A server compaction that drops as many messages as its reply adds: the list is as long, `compacted` moved.
    const sameLength = { ...view.context, messages: [messages[0]!, ...messages.slice(2), { role: 'assistant' as const, content: 'after the block' }], compacted: { times: 1, messages: 1, replies: 0 } };
    const serverPolicy = new SnapshotPolicy(0, whole.records[0]!.record, last);
    expect(serverPolicy.encode(view, { seq: last.seq + 1, at: 1, event: 'MODEL_REPLY', state: view.state, context: sameLength }).snapshot).toBeDefined();
    // The compaction helper's COMPACTED record is a snapshot by its name.
    expect(snapshotsAtEvent('COMPACTED')).toBe(true);
    expect(snapshotsAtEvent('CLOSE_TURN')).toBe(false);
  });
});

describe('by default, a snapshot only at a compaction', () => {
  /** A run of `turns` one-call turns with ~2 KB results, never compacted; the records it wrote. */
  async function plainRun(turns: number, snapshotEvery?: number): Promise<JournalRecord[]> {
    const store = new MemoryStore();
    const { tools } = countingTools();
    const script = Array.from({ length: turns }, (_, t) => toolUseReply([{ id: `l${t}`, name: 'lookup', input: { q: `${t} ${'x'.repeat(2000)}` } }]));
    await startRun({ store, model: scriptedModel([...script, endTurnReply('done')]), tools, task: 't', maxTurns: turns + 1, snapshotEvery });
    return (await store.load()).records.map((stored) => stored.record);
  }
  const bytes = (records: JournalRecord[]) => records.reduce((sum, record) => sum + JSON.stringify(record).length, 0);

  it('a run that never compacts restates nothing every 1,000 records: its conversation only grows, so a snapshot would double the bytes for a resume that reads it all anyway', async () => {
    expect(process.env[SNAPSHOT_EVERY_ENV] ?? '').toBe('');
    const byDefault = await plainRun(600);
    expect(byDefault.length).toBeGreaterThan(2000);
    expect(byDefault.filter((record) => record.snapshot)).toEqual([]);
    // Set explicitly, the count alone decides (drills and tests rely on it).
    const counted = await plainRun(600, 1000);
    expect(counted.filter((record) => record.snapshot).map((record) => record.seq)).toEqual([1000, 2000]);
    expect(bytes(counted)).toBeGreaterThan(1.5 * bytes(byDefault));
  }, 60_000);
});

describe('snapshotEvery', () => {
  it('takes the option, else the environment, else 0 (only at compactions); refuses what is not a whole number in range', () => {
    expect(snapshotEveryOf(undefined, {})).toBe(0);
    expect(snapshotEveryOf(undefined, { [SNAPSHOT_EVERY_ENV]: '7' })).toBe(7);
    expect(snapshotEveryOf(3, { [SNAPSHOT_EVERY_ENV]: '7' })).toBe(3);
    expect(snapshotEveryOf(0, {})).toBe(0);
    for (const bad of [-1, 1.5, Number.NaN]) expect(() => snapshotEveryOf(bad, {})).toThrow(SnapshotEveryError);
    expect(() => snapshotEveryOf(undefined, { [SNAPSHOT_EVERY_ENV]: 'often' })).toThrow(/DURABLE_AGENT_SNAPSHOT_EVERY/);
  });

  it('the CLI refuses a bad DURABLE_AGENT_SNAPSHOT_EVERY (exit 2), and writes nothing', () => {
    const dir = tempDir();
    const run = runCli(['demo', '--dir', dir], { cwd: dir, env: { [SNAPSHOT_EVERY_ENV]: 'often' } });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain('DURABLE_AGENT_SNAPSHOT_EVERY');
    expect(fs.existsSync(path.join(dir, '.durable-agent', JOURNAL_FILE))).toBe(false);
  }, 60_000);

  it('a bad value refuses the run before anything is written', async () => {
    const store = new MemoryStore();
    const { tools } = countingTools();
    await expect(startRun({ store, model: scriptedModel([endTurnReply('x')]), tools, task: 't', snapshotEvery: -2 })).rejects.toThrow(SnapshotEveryError);
    expect(await store.exists()).toBe(false);
  });
});
