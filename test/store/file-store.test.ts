/**
 * The file store on real files: atomic creation, durable appends, and what it does with every
 * kind of damage (recover a cut-off end and say so; refuse the rest and change nothing).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunLockedError, StoreCorruptError, StoreLostRecordError, StoreMissingError, StoreVersionError, StoreWriteError } from '../../src/store/errors.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { JOURNAL_FORMAT, JOURNAL_VERSION } from '../../src/store/journal/journal-record.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { storeRecord } from '../helpers/journal-records.ts';

const HEADER = { format: JOURNAL_FORMAT, version: JOURNAL_VERSION, runId: 'run-1', createdAt: 1 } as const;

const record = storeRecord;

async function storeWith(records: number): Promise<{ store: FileStore; dir: string; journal: string }> {
  const dir = path.join(tempDir(), '.durable-agent');
  const store = new FileStore(dir);
  await store.create(HEADER, record(0, { task: 'the task' }));
  for (let seq = 1; seq < records; seq++) await store.append(record(seq));
  store.close();
  return { store: new FileStore(dir), dir, journal: path.join(dir, 'journal.jsonl') };
}

/** Byte offsets where each record starts, plus the end of the file. */
async function recordBounds(store: FileStore): Promise<number[]> {
  const loaded = await store.load();
  const size = fs.statSync(store.journalPath).size;
  return [...loaded.records.map((r) => r.offset), size];
}

describe('creating and appending', () => {
  it('reads back exactly what was written', async () => {
    const { store } = await storeWith(5);
    const loaded = await store.load();
    expect(loaded.header).toEqual(HEADER);
    expect(loaded.records.map((r) => r.record)).toEqual([record(0, { task: 'the task' }), record(1), record(2), record(3), record(4)]);
    expect(loaded.tornTail).toBeNull();
  });

  it('never replaces an existing journal on create', async () => {
    const { store, journal } = await storeWith(2);
    const before = fs.readFileSync(journal);
    await expect(store.create(HEADER, record(0))).rejects.toThrow(StoreWriteError);
    expect(fs.readFileSync(journal)).toEqual(before);
  });

  it('appends after a repairing load', async () => {
    const { store } = await storeWith(3);
    await store.load({ repair: true });
    await store.append(record(3));
    store.close();
    expect((await new FileStore(store.dir).load()).records).toHaveLength(4);
  });

  it('writes each record once: the file grows by the record and nothing else', async () => {
    const { store, journal } = await storeWith(3);
    await store.load({ repair: true });
    const before = fs.statSync(journal).size;
    const receipt = await store.append(record(3, { finalText: 'x'.repeat(1000) }));
    expect(fs.statSync(journal).size - before).toBe(receipt.bytes);
    expect(receipt.bytes).toBeLessThan(1300);
  });
});

describe('a record appended without a sync', () => {
  it('is not counted by the commit mark until the next synced append, and loads meanwhile', async () => {
    const { store, journal } = await storeWith(2);
    await store.load({ repair: true });
    const markRecords = () => Number(/@commit (\d{10})/.exec(fs.readFileSync(journal, 'latin1'))![1]);
    await store.append(record(2), { sync: false });
    // A power loss now could drop the record: the mark must not count it yet.
    expect(markRecords()).toBe(2);
    const meanwhile = await new FileStore(store.dir).load();
    expect(meanwhile.records).toHaveLength(3);
    expect(meanwhile.tornTail).toBeNull();
    await store.append(record(3));
    expect(markRecords()).toBe(4);
    store.close();
    expect((await new FileStore(store.dir).load()).records).toHaveLength(4);
  });
});

describe('a failed write', () => {
  it('leaves the journal as it was and lets the next append go on', async () => {
    const dir = path.join(tempDir(), 'store');
    const store = new FileStore(dir, { writeFaults: 'save-a:1' });
    await store.create(HEADER, record(0));
    const before = fs.readFileSync(store.journalPath);
    const error = await store.append(record(1)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreWriteError);
    expect((error as StoreWriteError).message).toContain('checkpoint A');
    expect((error as StoreWriteError).message).toContain('ENOSPC');
    expect(fs.readFileSync(store.journalPath)).toEqual(before);
    await store.append(record(1));
    store.close();
    expect((await new FileStore(dir).load()).records).toHaveLength(2);
  });
});

describe('a cut-off end is recovered, and said', () => {
  it('recovers from a crash in the middle of writing a record (never committed)', async () => {
    const { store, journal } = await storeWith(4);
    const partial = '0badc0de {"seq":4,"at":10';
    fs.appendFileSync(journal, partial);
    const loaded = await store.load({ repair: true });
    expect(loaded.records).toHaveLength(4);
    expect(loaded.tornTail).toMatchObject({ bytes: partial.length, lostCommittedRecord: null });
    expect(fs.readFileSync(loaded.tornTail!.keptAt!, 'utf8')).toBe(partial);
    await store.append(record(4));
    store.close();
    expect((await new FileStore(store.dir).load()).records).toHaveLength(5);
  });

  it('refuses a file cut at any byte inside its last committed record, changing nothing, unless the loss is accepted', async () => {
    const { store, journal } = await storeWith(4);
    const original = fs.readFileSync(journal);
    const bounds = await recordBounds(store);
    const [lastStart, end] = bounds.slice(-2) as [number, number];
    for (let cut = lastStart; cut < end; cut++) {
      const cutBytes = original.subarray(0, cut);
      fs.writeFileSync(journal, cutBytes);
      for (const repair of [false, true]) {
        const error = await new FileStore(store.dir).load({ repair }).catch((e: unknown) => e);
        expect(error, `cut at ${cut}`).toBeInstanceOf(StoreLostRecordError);
        expect(error).toMatchObject({ record: 3, line: 6, offset: lastStart, bytesLeft: cut - lastStart, damage: 'lost-record' });
        expect((error as Error).message).toContain('record 3');
        expect((error as Error).message).toContain('is counted by the commit mark but missing');
        expect((error as Error).message).toContain('--accept-lost-record');
        expect(fs.readFileSync(journal)).toEqual(cutBytes);
      }
      const loaded = await new FileStore(store.dir).load({ acceptLostRecord: true });
      expect(loaded.records.map((r) => r.record.seq)).toEqual([0, 1, 2]);
      expect(loaded.tornTail).toMatchObject({ offset: lastStart, bytes: cut - lastStart, lostCommittedRecord: 3 });
    }
    expect(fs.readdirSync(store.dir).filter((name) => name.includes('.cut-'))).toEqual([]);
  });

  it('names what the lost record was when enough of it is left', async () => {
    const { store, journal } = await storeWith(4);
    const bounds = await recordBounds(store);
    fs.truncateSync(journal, bounds.at(-2)! + 80);
    const error = await store.load({ repair: true }).catch((e: unknown) => e);
    // Record 3 of storeWith is a MODEL_REPLY into pendingTool: checkpoint A.
    expect((error as Error).message).toContain('record 3 (checkpoint A) is counted by the commit mark but missing: only 80 of its bytes are left');
  });

  it('recovers a cut-off garbage tail without a newline (stated as a cut-off end)', async () => {
    const { store, journal } = await storeWith(3);
    fs.appendFileSync(journal, Buffer.from([0, 0, 0, 0x41, 0x42]));
    const loaded = await store.load();
    expect(loaded.records).toHaveLength(3);
    expect(loaded.tornTail).toMatchObject({ bytes: 5, lostCommittedRecord: null });
  });
});

describe('damage that is refused, changing nothing', () => {
  it('refuses a file cut inside an earlier record, naming the missing records', async () => {
    const { store, journal } = await storeWith(6);
    const bounds = await recordBounds(store);
    fs.truncateSync(journal, bounds[2]! + 10);
    const before = fs.readFileSync(journal);
    const error = await store.load({ repair: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreCorruptError);
    expect((error as Error).message).toContain('records 2 to 5 are missing');
    expect(fs.readFileSync(journal)).toEqual(before);
  });

  it('refuses a changed byte in an earlier record and in the last one', async () => {
    for (const which of [1, 3]) {
      const { store, journal } = await storeWith(4);
      const bounds = await recordBounds(store);
      const bytes = fs.readFileSync(journal);
      const at = bounds[which]! + 30;
      bytes[at] = bytes[at]! ^ 0x20;
      fs.writeFileSync(journal, bytes);
      const error = await store.load({ repair: true }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreCorruptError);
      expect((error as StoreCorruptError).line).toBe(which + 3);
      expect((error as Error).message).toContain('checksum mismatch');
      expect(fs.readFileSync(journal)).toEqual(bytes);
    }
  });

  it('refuses garbage appended as a whole line', async () => {
    const { store, journal } = await storeWith(3);
    fs.appendFileSync(journal, 'this is not a record\n');
    await expect(store.load()).rejects.toThrow(StoreCorruptError);
  });

  it('refuses a damaged commit mark or header', async () => {
    const { store, journal } = await storeWith(2);
    const original = fs.readFileSync(journal);
    const markAt = original.indexOf(0x0a) + 12;
    const damaged = Buffer.from(original);
    damaged[markAt] = damaged[markAt] === 0x30 ? 0x31 : 0x30;
    fs.writeFileSync(journal, damaged);
    await expect(store.load()).rejects.toThrow(/commit mark fails its checksum/);
    fs.writeFileSync(journal, Buffer.concat([Buffer.from('{}\n'), original]));
    await expect(store.load()).rejects.toThrow(StoreCorruptError);
  });

  it('refuses a journal of another version, naming both', async () => {
    const dir = path.join(tempDir(), 'store');
    const store = new FileStore(dir);
    await store.create({ ...HEADER, version: 7 }, record(0));
    const error = await new FileStore(dir).load().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreVersionError);
    expect((error as Error).message).toContain('has version 7; this durable-agent reads version 1');
  });

  it('says there is no run when the journal is missing', async () => {
    const store = new FileStore(path.join(tempDir(), 'nothing'));
    await expect(store.load()).rejects.toThrow(StoreMissingError);
  });
});

describe('the run lock', () => {
  it('refuses a second holder while the first is alive, naming it', async () => {
    const { store } = await storeWith(1);
    const lock = await store.lock();
    const error = await new FileStore(store.dir).lock().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunLockedError);
    expect((error as Error).message).toContain(`pid ${process.pid}`);
    await lock.release();
    const again = await new FileStore(store.dir).lock();
    await again.release();
  });

  it('takes over the lock of a holder that died', async () => {
    const { store, dir } = await storeWith(1);
    fs.writeFileSync(
      path.join(dir, 'lock'),
      JSON.stringify({ pid: 2 ** 22 + 12345, host: (await import('node:os')).hostname(), processStart: null, since: 'then', command: 'x' }),
    );
    const lock = await store.lock();
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'lock'), 'utf8')).pid).toBe(process.pid);
    await lock.release();
    expect(fs.existsSync(path.join(dir, 'lock'))).toBe(false);
  });
});
