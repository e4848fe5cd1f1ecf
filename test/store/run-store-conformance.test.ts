/**
 * One contract, every store: the same cases run against each RunStore this package ships (the
 * memory store, the file store of a state folder, a run of a folder of runs, the PostgreSQL
 * store), so a store that drifts from the contract written in src/store/store.ts fails here by
 * name. Where a store legitimately differs, the case says so with `it.skipIf` and the reason
 * beside it. The PostgreSQL store runs where PostgreSQL is installed (use-postgres.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import { StoreCorruptError, StoreMissingError, StoreVersionError } from '../../src/store/errors.ts';
import { FileRuns } from '../../src/store/file-runs.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { snapshotContextOf } from '../../src/store/journal/journal-codec.ts';
import { JOURNAL_FORMAT, JOURNAL_VERSION, type JournalHeader, type JournalRecord } from '../../src/store/journal/journal-record.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import type { RunStore } from '../../src/store/store.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { storeRecord } from '../helpers/journal-records.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { pool, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';

interface Contender {
  name: string;
  /** The store of this run, not yet locked; the same id opens the same run. */
  open(runId: string): RunStore;
  /** What sets this store apart, for the cases that do not apply to it. */
  inMemory?: boolean;
  /** Writes half a record at the end of the run's journal, as a kill during an append leaves it (files only). */
  tearTail?(store: RunStore): void;
}

let runs = 0;
const nextId = () => `conf-${++runs}`;
const headerOf = (runId: string, extra: Partial<JournalHeader> = {}): JournalHeader => ({ format: JOURNAL_FORMAT, version: JOURNAL_VERSION, runId, createdAt: 1, ...extra });
const seqs = (records: readonly { record: JournalRecord }[]) => records.map((stored) => stored.record.seq);

/** A store of a fresh run, locked (a PostgreSQL store writes only under its lease) and created with record 0. */
async function createdRun(contender: Contender): Promise<{ store: RunStore; runId: string }> {
  const runId = nextId();
  const store = contender.open(runId);
  await store.lock();
  await store.create(headerOf(runId), storeRecord(0));
  return { store, runId };
}

function conformance(contender: Contender): void {
  it('exists() is false before create and true after', async () => {
    const runId = nextId();
    const store = contender.open(runId);
    expect(await store.exists()).toBe(false);
    await expect(store.load()).rejects.toBeInstanceOf(StoreMissingError);
    await store.lock();
    await store.create(headerOf(runId), storeRecord(0));
    expect(await store.exists()).toBe(true);
  });

  it('create then load returns what was written, to this store and to another one opened on the run', async () => {
    const { store, runId } = await createdRun(contender);
    await store.append(storeRecord(1));
    for (const reader of [store, contender.open(runId)]) {
      const loaded = await reader.load();
      expect(loaded.header).toEqual(headerOf(runId));
      expect(loaded.records.map((stored) => stored.record)).toEqual([storeRecord(0), storeRecord(1)]);
      expect(loaded.tornTail).toBeNull();
    }
  });

  it('create twice fails and leaves the first journal as it was', async () => {
    const { store } = await createdRun(contender);
    await expect(store.create(headerOf('another'), storeRecord(0, { turn: 9 }))).rejects.toThrow();
    const loaded = await store.load();
    expect(loaded.records.map((stored) => stored.record)).toEqual([storeRecord(0)]);
  });

  it('append and appendBatch keep the order they were called in', async () => {
    const { store, runId } = await createdRun(contender);
    await store.append(storeRecord(1));
    const batch = await store.appendBatch!([storeRecord(2), storeRecord(3), storeRecord(4)]);
    expect(batch.bytesEach).toHaveLength(3);
    await store.append(storeRecord(5));
    expect(seqs((await contender.open(runId).load()).records)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  // The memory store keeps the objects it is given and encodes nothing, so no record can fail half-way through a batch.
  it.skipIf(contender.inMemory)('a batch that cannot be written writes none of its records', async () => {
    const { store, runId } = await createdRun(contender);
    await store.append(storeRecord(1));
    const unencodable = { ...storeRecord(3), note: { size: 1n } } as unknown as JournalRecord;
    await expect(store.appendBatch!([storeRecord(2), unencodable])).rejects.toThrow();
    expect(seqs((await contender.open(runId).load()).records)).toEqual([0, 1]);
  });

  // The memory store holds only what this process wrote with this release: it never meets a journal of another version.
  it.skipIf(contender.inMemory)('refuses a journal of another version, and one of another format, with a clear error', async () => {
    const newer = contender.open(nextId());
    await newer.lock();
    await newer.create(headerOf('newer', { version: JOURNAL_VERSION + 1 }), storeRecord(0));
    const refused = await newer.load().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StoreVersionError);
    expect(refused).toMatchObject({ name: 'StoreVersionError', foundVersion: JOURNAL_VERSION + 1, supportedVersion: JOURNAL_VERSION });
    expect((refused as Error).message).toMatch(/nothing was changed/);

    const foreign = contender.open(nextId());
    await foreign.lock();
    await foreign.create({ ...headerOf('foreign'), format: 'someone-else/journal' } as unknown as JournalHeader, storeRecord(0));
    await expect(foreign.load()).rejects.toBeInstanceOf(StoreCorruptError);
  });

  it('a load from the last snapshot starts at it and folds to the state of the whole journal', async () => {
    const runId = nextId();
    const turns = 12;
    const script = Array.from({ length: turns }, (_, n) => toolUseReply([{ id: `toolu_${n}`, name: 'lookup', input: { q: `q${n}` } }]));
    const store = contender.open(runId);
    const result = await startRun({ store, model: scriptedModel([...script, endTurnReply('done')]), tools: countingTools().tools, task: 'look things up', maxTurns: turns + 1, snapshotEvery: 10 });
    expect(result.status).toBe('done');
    const reader = contender.open(runId);
    const whole = await reader.load();
    const partial = await reader.load({ fromLastSnapshot: true });
    const snapshots = whole.records.filter((stored) => stored.record.snapshot).map((stored) => stored.record.seq);
    expect(snapshots.length).toBeGreaterThan(1);
    expect(partial.records[0]!.record.seq).toBe(snapshots[snapshots.length - 1]);
    expect(partial.records.length).toBeLessThan(whole.records.length);
    expect(snapshotContextOf(foldJournal(reader.location, partial))).toEqual(snapshotContextOf(foldJournal(reader.location, whole)));
  });

  it('the decision inbox: a second decision about a call is "exists"; read; settle removes it', async () => {
    const { store } = await createdRun(contender);
    const inbox = store.decisions!;
    const decision = { tool_use_id: 'toolu_1', verdict: 'approved', by: 'ana', at: 5 } as const;
    expect(await inbox.write(decision)).toBe('written');
    expect(await inbox.write({ ...decision, verdict: 'denied', reason: 'no' })).toBe('exists');
    expect(await inbox.read()).toEqual([decision]);
    await inbox.settle('toolu_1');
    expect(await inbox.read()).toEqual([]);
  });

  // The memory store has no control inbox: a run in memory cannot be reached from another process to cancel or pause.
  it.skipIf(contender.inMemory)('the control inbox: one request per kind ("exists" on a second); read; settle removes it', async () => {
    const { store } = await createdRun(contender);
    const inbox = store.control!;
    const cancel = { kind: 'cancel', by: 'ana', reason: 'enough', at: 5 } as const;
    expect(await inbox.write(cancel)).toBe('written');
    expect(await inbox.write({ ...cancel, reason: 'again' })).toBe('exists');
    expect(await inbox.read()).toEqual([cancel]);
    await inbox.settle('cancel');
    expect(await inbox.read()).toEqual([]);
  });

  // The memory store has no signal inbox: its waits end by their time only.
  it.skipIf(contender.inMemory)('the signal inbox: a signal sent twice is delivered once; a wait takes it, and finds it again after', async () => {
    const { store } = await createdRun(contender);
    const inbox = store.signals!;
    const signal = { name: 'ready', id: 'sig-1', data: { n: 1 }, by: 'ana', at: 5 };
    expect(await inbox.send(signal)).toEqual({ outcome: 'delivered' });
    expect((await inbox.send(signal)).outcome).not.toBe('delivered');
    expect(await inbox.waiting()).toEqual([signal]);
    expect(await inbox.take('ready', 'toolu_w', Date.now() + 1000)).toEqual(signal);
    expect(await inbox.takenBy('toolu_w')).toEqual(signal);
    expect(await inbox.waiting()).toEqual([]);
    expect(await inbox.take('ready', 'toolu_x', Date.now() + 1000)).toBeNull();
  });

  it('archive() moves the run aside, and a new run can start in its place', async () => {
    const { store, runId } = await createdRun(contender);
    await store.append(storeRecord(1));
    const aside = await store.archive();
    expect(aside).toEqual(expect.any(String));
    expect(aside).not.toBe(store.location);
    expect(await store.exists()).toBe(false);
    await store.create(headerOf(runId), storeRecord(0, { turn: 7 }));
    const loaded = await contender.open(runId).load();
    expect(loaded.records.map((stored) => stored.record)).toEqual([storeRecord(0, { turn: 7 })]);
  });

  it('a run whose last record is a final one loads as that record alone with finalRecord; any other as from its last snapshot', async () => {
    const { store, runId } = await createdRun(contender);
    await store.append(storeRecord(1));
    await store.append(storeRecord(2));
    expect(seqs((await contender.open(runId).load({ fromLastSnapshot: true, finalRecord: true })).records)).toEqual([0, 1, 2]);
    const context = { task: 't', system: null, maxTurns: 10, turn: 1, usage: { input: 3, output: 3, cacheRead: 0, cacheWrite: 0 }, pending: [], results: [], decisions: [], awaiting: null, pausesInARow: 0, maxPausesInARow: 8, heldReply: null, finalText: 'ok', failure: null };
    const final = storeRecord(3, { state: 'done', event: 'MODEL_REPLY', finalText: 'ok', final: { context, ledgerEntries: 0 } });
    await store.append(final);
    for (const reader of [store, contender.open(runId)]) {
      expect((await reader.load({ fromLastSnapshot: true, finalRecord: true })).records.map((stored) => stored.record)).toEqual([final]);
      expect(seqs((await reader.load({ fromLastSnapshot: true })).records)).toEqual([0, 1, 2, 3]);
    }
  });

  // Only a file can hold half a record: the memory store keeps whole objects and PostgreSQL commits each record in one statement.
  it.skipIf(!contender.tearTail)('a torn tail is refused for writing, and a repairing load cuts it off and says where', async () => {
    const { store, runId } = await createdRun(contender);
    await store.append(storeRecord(1));
    contender.tearTail!(store);
    const repaired = await contender.open(runId).load({ repair: true });
    expect(seqs(repaired.records)).toEqual([0, 1]);
    expect(repaired.tornTail).not.toBeNull();
  });
}

/** The memory store keeps its runs in the instance: the same id opens the same instance. */
function memoryContender(): Contender {
  const stores = new Map<string, MemoryStore>();
  return {
    name: 'the memory store',
    inMemory: true,
    open: (runId) => stores.get(runId) ?? stores.set(runId, new MemoryStore(runId)).get(runId)!,
  };
}

function tearFile(store: RunStore): void {
  fs.appendFileSync((store as FileStore).journalPath, '0badc0de {"seq":2,"at":');
}

describe('the RunStore contract: the memory store', () => {
  conformance(memoryContender());
});

describe('the RunStore contract: the file store of a state folder', () => {
  const root = tempDir('conformance-file-');
  conformance({ name: 'the file store', open: (runId) => new FileStore(path.join(root, runId)), tearTail: tearFile });
});

describe('the RunStore contract: a run of a folder of runs', () => {
  const runsFolder = new FileRuns(tempDir('conformance-runs-'));
  conformance({ name: 'a folder of runs', open: (runId) => runsFolder.store(runId), tearTail: tearFile });
});

describe.skipIf(!postgresAvailable())('the RunStore contract: the PostgreSQL store', () => {
  usePostgres({ connections: 8 });
  // `pool` is read when a store is opened, once the cluster runs.
  conformance({ name: 'the PostgreSQL store', open: (runId) => new PgRunStore(pool, runId, { leaseMs: 60_000 }) });
});
