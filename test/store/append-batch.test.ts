/**
 * appendBatch: several records as one atomic unit with one fsync. After a failed write, a kill
 * mid-write or a power loss that kept only part of it, a reload holds the whole unit or none of
 * it. Appends made while a grouped fsync is in flight share the next one (group commit).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CommitQueue } from '../../src/store/commit-queue.ts';
import { StoreLostRecordError, StoreWriteError } from '../../src/store/errors.ts';
import { FileStore, JOURNAL_FILE } from '../../src/store/file-store.ts';
import { COMMIT_MARK_BYTES, frameCommitMark } from '../../src/store/journal/framing.ts';
import { JOURNAL_FORMAT, JOURNAL_VERSION } from '../../src/store/journal/journal-record.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { storeRecord } from '../helpers/journal-records.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const HEADER = { format: JOURNAL_FORMAT, version: JOURNAL_VERSION, runId: 'run-1', createdAt: 1 } as const;

afterEach(() => vi.restoreAllMocks());

/** A journal of records 0-2, then the unit 3-5 appended with appendBatch; the file's size before the unit. */
async function journalWithUnit(writeFaults?: string) {
  const dir = path.join(tempDir(), '.durable-agent');
  const store = new FileStore(dir, writeFaults ? { writeFaults } : {});
  await store.create(HEADER, storeRecord(0));
  await store.append(storeRecord(1));
  await store.append(storeRecord(2));
  const file = path.join(dir, JOURNAL_FILE);
  const before = fs.statSync(file).size;
  const markBefore = readMark(file);
  return { dir, store, file, before, markBefore };
}

function readMark(file: string): Buffer {
  const bytes = fs.readFileSync(file);
  const at = bytes.indexOf(0x0a) + 1;
  return bytes.subarray(at, at + COMMIT_MARK_BYTES);
}

function writeMark(file: string, mark: Buffer): void {
  const bytes = fs.readFileSync(file);
  mark.copy(bytes, bytes.indexOf(0x0a) + 1);
  fs.writeFileSync(file, bytes);
}

const seqs = (loaded: { records: { record: { seq: number } }[] }) => loaded.records.map((r) => r.record.seq);

describe('appendBatch on the file store', () => {
  it('writes the unit in one piece with one fdatasync; a reload reads every record of it', async () => {
    const { store, dir } = await journalWithUnit();
    const syncs = vi.spyOn(fs, 'fdatasyncSync');
    const writes = vi.spyOn(fs, 'writeSync');
    const receipt = await store.appendBatch([storeRecord(3), storeRecord(4), storeRecord(5)]);
    expect(syncs).toHaveBeenCalledTimes(1);
    expect(writes).toHaveBeenCalledTimes(2); // the three records, then the commit mark
    expect(receipt.bytesEach).toHaveLength(3);
    expect(receipt.bytes).toBe(receipt.bytesEach!.reduce((a, b) => a + b, 0));
    store.close();
    const loaded = await new FileStore(dir).load();
    expect(seqs(loaded)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(loaded.records.slice(3).map((r) => r.record.more)).toEqual([2, 1, undefined]);
    expect(loaded.tornTail).toBeNull();
  });

  it('a write that fails inside the unit leaves none of it, and the next append follows the records before it', async () => {
    // storeRecord(4) is a CLOSE_TURN record: the first save-b written, failed half-way.
    const { store, dir } = await journalWithUnit('save-b:2');
    const error = await store.appendBatch([storeRecord(3), storeRecord(4), storeRecord(5)]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreWriteError);
    expect((error as StoreWriteError).what).toContain('record 4');
    await store.appendBatch([storeRecord(3), storeRecord(4, { event: 'MODEL_REPLY', state: 'pendingTool' })]);
    store.close();
    const loaded = await new FileStore(dir).load();
    expect(seqs(loaded)).toEqual([0, 1, 2, 3, 4]);
    expect(loaded.tornTail).toBeNull();
  });

  it('cut anywhere inside the unit before its mark was written (a kill mid-write): all of it or none, at every byte', async () => {
    const { store, file, before, markBefore } = await journalWithUnit();
    await store.appendBatch([storeRecord(3), storeRecord(4), storeRecord(5)]);
    store.close();
    const whole = fs.readFileSync(file);
    for (let end = before; end <= whole.length; end++) {
      fs.writeFileSync(file, whole.subarray(0, end));
      writeMark(file, markBefore);
      const loaded = await new FileStore(path.dirname(file)).load();
      expect(seqs(loaded), `cut at byte ${end}`).toEqual(end === whole.length ? [0, 1, 2, 3, 4, 5] : [0, 1, 2]);
      if (end > before && end < whole.length) expect(loaded.tornTail, `cut at byte ${end}`).toMatchObject({ offset: before, bytes: end - before, lostCommittedRecord: null });
    }
  });

  it('a repairing load cuts a partial unit off whole and keeps its bytes; appends then follow the records before it', async () => {
    const { store, dir, file, before, markBefore } = await journalWithUnit();
    await store.appendBatch([storeRecord(3), storeRecord(4), storeRecord(5)]);
    store.close();
    const whole = fs.readFileSync(file);
    // Records 3 and 4 whole, 5 gone: a power loss that kept two pages of three, and the old mark.
    const cut = whole.lastIndexOf(0x0a, whole.length - 2) + 1;
    fs.writeFileSync(file, whole.subarray(0, cut));
    writeMark(file, markBefore);
    const writer = new FileStore(dir);
    await writer.lock();
    const repaired = await writer.load({ repair: true });
    expect(seqs(repaired)).toEqual([0, 1, 2]);
    expect(repaired.tornTail).toMatchObject({ offset: before, bytes: cut - before });
    expect(fs.readFileSync(repaired.tornTail!.keptAt!)).toEqual(whole.subarray(before, cut));
    await writer.append(storeRecord(3));
    writer.close();
    expect(seqs(await new FileStore(dir).load())).toEqual([0, 1, 2, 3]);
  });

  it('a unit the mark counts but the disk lost in part is refused as a lost record, or dropped whole when the loss is accepted', async () => {
    const { store, file } = await journalWithUnit();
    await store.appendBatch([storeRecord(3), storeRecord(4), storeRecord(5)]);
    store.close();
    const whole = fs.readFileSync(file);
    fs.writeFileSync(file, whole.subarray(0, whole.lastIndexOf(0x0a, whole.length - 2) + 1));
    const refused = await new FileStore(path.dirname(file)).load().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StoreLostRecordError);
    expect((refused as StoreLostRecordError).record).toBe(3);
    const accepted = await new FileStore(path.dirname(file)).load({ acceptLostRecord: true });
    expect(seqs(accepted)).toEqual([0, 1, 2]);
    expect(accepted.tornTail?.lostCommittedRecord).toBe(3);
  });

  it('refuses a "more" that is not a count', async () => {
    const { store, file } = await journalWithUnit();
    await store.append(storeRecord(3, { more: 0 } as never));
    store.close();
    await expect(new FileStore(path.dirname(file)).load()).rejects.toThrow(/"more" is 0/);
  });
});

describe('group commit', () => {
  it('appends made while a grouped fsync is in flight share the next one, in order', async () => {
    const { store, dir } = await journalWithUnit();
    const syncs = vi.spyOn(fs, 'fdatasync');
    const appends = [store.appendBatch([storeRecord(3)], { groupCommit: true })];
    // Made while the first one's fsync is in flight: queued, then written and synced together.
    appends.push(store.append(storeRecord(4), { groupCommit: true }), store.appendBatch([storeRecord(5), storeRecord(6)]), store.append(storeRecord(7)));
    const receipts = await Promise.all(appends);
    expect(syncs).toHaveBeenCalledTimes(2);
    expect(receipts.map((r) => r.bytesEach?.length)).toEqual([1, 1, 2, 1]);
    store.close();
    const loaded = await new FileStore(dir).load();
    expect(seqs(loaded)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(loaded.records.map((r) => r.record.more ?? 0)).toEqual([0, 0, 0, 0, 0, 1, 0, 0]);
  });

  it('a failed flush fails its appends and those queued behind it; the journal is as it was', async () => {
    // storeRecord(4) is the second CLOSE_TURN (save-b) written: it fails half-way.
    const { store, dir } = await journalWithUnit('save-b:2');
    const first = store.append(storeRecord(3), { groupCommit: true });
    const queued = [store.append(storeRecord(4), { groupCommit: true }), store.append(storeRecord(5), { groupCommit: true })];
    await first;
    const outcomes = await Promise.allSettled(queued);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    store.close();
    expect(seqs(await new FileStore(dir).load())).toEqual([0, 1, 2, 3]);
  });

  it('CommitQueue: one flush at a time, everything queued meanwhile in the next, each caller its own receipt', async () => {
    const flushed: number[][] = [];
    let release: () => void = () => {};
    const queue = new CommitQueue<number, string>(async (units) => {
      flushed.push(units);
      await new Promise<void>((resolve) => (release = resolve));
      return units.map((unit) => `receipt ${unit}`);
    });
    const results = [queue.submit(1), queue.submit(2), queue.submit(3)];
    expect(queue.busy).toBe(true);
    release();
    await results[0];
    await Promise.resolve();
    release();
    expect(await Promise.all(results)).toEqual(['receipt 1', 'receipt 2', 'receipt 3']);
    expect(flushed).toEqual([[1], [2, 3]]);
    expect(queue.groupedFlushes).toBe(1);
    expect(queue.busy).toBe(false);
  });
});

describe('appendBatch on the memory store', () => {
  it('appends every record in order', async () => {
    const store = new MemoryStore();
    await store.create(HEADER, storeRecord(0));
    await store.appendBatch([storeRecord(1), storeRecord(2)]);
    expect(seqs(await store.load())).toEqual([0, 1, 2]);
  });
});

// The commit mark a test restores must be a valid one: checked here so a change of format fails loudly.
it('frameCommitMark has the size the tests splice in', () => {
  expect(frameCommitMark({ records: 1, bytes: 1 }).length).toBe(COMMIT_MARK_BYTES);
});
