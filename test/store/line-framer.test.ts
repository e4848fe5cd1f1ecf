/**
 * The file store frames a flush's lines into one reused buffer and its commit mark into another
 * (LineFramer, CommitMarkFramer). The journal's bytes must stay exactly those of frameLine and
 * frameCommitMark, record for record, and a cut-off or lost end must still be told apart.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreLostRecordError } from '../../src/store/errors.ts';
import { FileStore, JOURNAL_FILE } from '../../src/store/file-store.ts';
import { CommitMarkFramer, frameCommitMark, frameLine, LineFramer, parseCommitMark, RecordEncodeError } from '../../src/store/journal/framing.ts';
import { JOURNAL_FORMAT, JOURNAL_VERSION, type JournalRecord } from '../../src/store/journal/journal-record.ts';
import { storeRecord } from '../helpers/journal-records.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const HEADER = { format: JOURNAL_FORMAT, version: JOURNAL_VERSION, runId: 'run-bytes', createdAt: 7 } as const;

/** Documents of every kind a line may hold: multi-byte and lone-surrogate text, big ones that outgrow the framer's buffer. */
const DOCUMENTS: unknown[] = [
  { a: 1 },
  { text: 'héllo \ud800 lone \udfff', emoji: '💥'.repeat(300) },
  { big: 'x'.repeat(70_000), list: [1, { z: 'ü' }] },
  'plain',
  null,
  0,
  [],
  { nested: { deep: [{ k: '\n\t"quoted"' }] }, n: -1.5e-7 },
  { huge: 'ж'.repeat(200_000) },
  { after: 'a small one after the huge one' },
];

describe('LineFramer', () => {
  it('frames each document into exactly the bytes frameLine gives it, back to back, across buffer growth and reset', () => {
    const framer = new LineFramer();
    for (let round = 0; round < 2; round++) {
      framer.reset();
      const lengths = DOCUMENTS.map((document) => framer.frame(document));
      const expected = DOCUMENTS.map((document) => frameLine(document));
      expect(lengths).toEqual(expected.map((line) => line.length));
      expect(framer.bytes().equals(Buffer.concat(expected))).toBe(true);
    }
    for (const document of DOCUMENTS) {
      framer.reset();
      framer.frame(document);
      expect(framer.bytes().equals(frameLine(document))).toBe(true);
    }
  });

  it('refuses a document JSON cannot represent as frameLine does, keeping the lines framed before it', () => {
    const framer = new LineFramer();
    framer.reset();
    framer.frame({ a: 1 });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => framer.frame(cyclic)).toThrow(RecordEncodeError);
    expect(() => framer.frame(undefined)).toThrow(RecordEncodeError);
    expect(framer.bytes().equals(frameLine({ a: 1 }))).toBe(true);
  });
});

describe('CommitMarkFramer', () => {
  it('gives frameCommitMark’s bytes for any count, the widest included, and reads back', () => {
    const framer = new CommitMarkFramer();
    const marks = [
      { records: 0, bytes: 0 },
      { records: 1, bytes: 441 },
      { records: 123_456, bytes: 98_765_432_101 },
      { records: 9_999_999_999, bytes: 999_999_999_999 },
      ...Array.from({ length: 200 }, (_, i) => ({ records: (i * 7919) % 100_003, bytes: i * 2_654_435_761 })),
    ];
    for (const mark of marks) {
      const framed = framer.frame(mark);
      expect(framed.equals(frameCommitMark(mark)), JSON.stringify(mark)).toBe(true);
      expect(parseCommitMark(framed, 0, 2)).toEqual(mark);
    }
  });

  it('falls back to frameCommitMark for counts too wide for the fields (the same bytes as before)', () => {
    const framer = new CommitMarkFramer();
    for (const mark of [{ records: 10_000_000_000, bytes: 1 }, { records: 1, bytes: 1_000_000_000_000 }]) {
      expect(framer.frame(mark).equals(frameCommitMark(mark))).toBe(true);
    }
  });
});

/** What frameLine and frameCommitMark (the encoder before LineFramer) make of the same appends. */
function expectedJournal(first: JournalRecord, units: Array<{ records: JournalRecord[]; sync: boolean }>): Buffer {
  const head = frameLine(HEADER);
  const lines = [frameLine(first)];
  let committed = { records: 1, bytes: 0 };
  let records = 1;
  const markLength = frameCommitMark({ records: 0, bytes: 0 }).length;
  let bytes = head.length + markLength + lines[0]!.length;
  committed = { records, bytes };
  for (const unit of units) {
    unit.records.forEach((record, index) => {
      const more = unit.records.length - 1 - index;
      const line = frameLine(more > 0 ? { ...record, more } : record);
      lines.push(line);
      records += 1;
      bytes += line.length;
    });
    if (unit.sync) committed = { records, bytes };
  }
  return Buffer.concat([head, frameCommitMark(committed), ...lines]);
}

describe('the file store’s journal bytes', () => {
  const varied = (seq: number): JournalRecord =>
    storeRecord(seq, seq % 3 === 0 ? { task: `task ${'é'.repeat(seq)} 💥 \ud800`, note: { text: 'x'.repeat(seq * 997) } as never } : {});

  it('are those of the old encoder for single appends, unsynced appends and units, big records included', async () => {
    const dir = path.join(tempDir(), '.durable-agent');
    const store = new FileStore(dir);
    const first = varied(0);
    await store.create(HEADER, first);
    const units: Array<{ records: JournalRecord[]; sync: boolean }> = [];
    let seq = 1;
    const append = async (count: number, sync: boolean) => {
      const records = Array.from({ length: count }, () => varied(seq++));
      units.push({ records, sync });
      if (count === 1) await store.append(records[0]!, { sync });
      else await store.appendBatch(records, { sync });
    };
    for (let round = 0; round < 12; round++) {
      await append(1, true);
      await append(1, false);
      await append(3, round % 2 === 0);
      await append(1, true);
    }
    // One far larger than the framer keeps between flushes, then small ones again.
    units.push({ records: [storeRecord(seq, { note: { text: 'ß'.repeat(300_000) } as never })], sync: true });
    await store.append(units.at(-1)!.records[0]!);
    seq += 1;
    await append(2, true);
    store.close();
    expect(fs.readFileSync(path.join(dir, JOURNAL_FILE)).equals(expectedJournal(first, units))).toBe(true);
    const loaded = await new FileStore(dir).load();
    expect(loaded.records.map((r) => r.record.seq)).toEqual(Array.from({ length: seq }, (_, i) => i));
    expect(loaded.tornTail).toBeNull();
  });

  it('still tell a torn last write (a cut inside the line after the mark) from a lost committed record (the mark counts it)', async () => {
    const dir = path.join(tempDir(), '.durable-agent');
    const store = new FileStore(dir);
    await store.create(HEADER, storeRecord(0));
    for (let seq = 1; seq <= 4; seq++) await store.append(storeRecord(seq));
    await store.append(storeRecord(5), { sync: false });
    store.close();
    const file = path.join(dir, JOURNAL_FILE);
    const whole = fs.readFileSync(file);
    const loaded = await new FileStore(dir).load();
    const [committedLast, uncommitted] = [loaded.records.at(-2)!, loaded.records.at(-1)!];

    // Record 5 was appended without a sync: the mark does not count it, so a cut inside it is a torn write.
    fs.writeFileSync(file, whole.subarray(0, uncommitted.offset + 9));
    const torn = await new FileStore(dir).load();
    expect(torn.records.at(-1)!.record.seq).toBe(4);
    expect(torn.tornTail).toMatchObject({ offset: uncommitted.offset, bytes: 9, lostCommittedRecord: null });

    // Record 4 is counted by the mark: a cut inside it is a lost committed record, refused.
    fs.writeFileSync(file, whole.subarray(0, committedLast.offset + 9));
    await expect(new FileStore(dir).load({ repair: true })).rejects.toBeInstanceOf(StoreLostRecordError);
  });
});
