/**
 * A plain run sealed in (keys rotate --seal-plain), in process and on real files: every byte of
 * its content is written again sealed (records, blobs under keyed names, the entries waiting in
 * its inboxes), the sealed journal passes every check a journal written sealed passes (checksums,
 * commit mark, the snapshot links a resume reads from), and the run resumes with the keys and goes
 * on; a run driven meanwhile is left plain; a rotation run again redoes nothing.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { readRunTranscript } from '../../src/runtime/run-transcript.ts';
import { isSealedBlobName } from '../../src/seal/blob-seal.ts';
import { KeyRing } from '../../src/seal/keys.ts';
import { KeyNotGivenError } from '../../src/seal/seal-errors.ts';
import { blobFilesOf } from '../../src/store/blobs.ts';
import { FileStore, RunFolderStore, fileBytes } from '../../src/store/file-store.ts';
import { JOURNAL_FORMAT, JOURNAL_VERSION } from '../../src/store/journal/journal-record.ts';
import { FileControlInbox } from '../../src/store/inbox/file-control-inbox.ts';
import { readJournal } from '../../src/store/journal/journal-reader.ts';
import { sealPlainRuns } from '../../src/store/seal-plain-runs.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { folderText } from '../helpers/folder-text.ts';
import { REPO } from '../helpers/cli.ts';
import { storeRecord } from '../helpers/journal-records.ts';

const SECRET = 'PASSPORT OF ANA ORTEGA, NUMBER X4471';
const PICTURE = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from(`${SECRET} `.repeat(110), 'latin1')]);
const PLAIN_NAME = `sha256-${createHash('sha256').update(PICTURE).digest('hex')}`;
const TASK = 'Scan the passport of the new hire';
const SIGNAL_DATA = 'the badge number is 7731-secret';
const REASON = 'the hire fell through, do not keep the scan';
const ring = () => KeyRing.of([{ id: 'k1', key: randomBytes(32) }]);

let scans = 0;
const scanTool = defineTool({
  name: 'scan',
  description: 'Scans the document on the glass.',
  readOnly: false,
  inputSchema: { type: 'object' },
  run: () => {
    scans++;
    return [{ type: 'text', text: 'the scan:' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PICTURE.toString('base64') } }];
  },
});

const script = () => [
  toolUseReply([{ id: 'toolu_scan1', name: 'scan', input: {} }], 'Scanning.'),
  toolUseReply([{ id: 'toolu_scan2', name: 'scan', input: {} }], 'Once more.'),
  toolUseReply([{ id: 'toolu_scan3', name: 'scan', input: {} }], 'A third time.'),
  endTurnReply('Scanned.'),
];


function readFile(journal: string, fromLastSnapshot: boolean) {
  const fd = fs.openSync(journal, 'r');
  try {
    return readJournal(journal, fileBytes(fd), { fromLastSnapshot });
  } finally {
    fs.closeSync(fd);
  }
}

/** A plain run stopped after the second scan's effect, with a snapshot every 2 records, a blob and a signal waiting. */
async function plainRun(): Promise<string> {
  const dir = path.join(tempDir('da-seal-in-'), '.durable-agent');
  const run = startRun({ store: new FileStore(dir), model: scriptedModel(script()), tools: [scanTool], task: TASK, snapshotEvery: 2, crashAfter: 'after-effect-write:2' });
  await expect(run).rejects.toMatchObject({ name: 'SimulatedCrash' });
  await new FileStore(dir).signals.send({ name: 'badge', id: 'b-1', data: SIGNAL_DATA, by: 'hr', at: Date.now() });
  expect(blobFilesOf(dir).map((file) => file.name)).toEqual([PLAIN_NAME]);
  expect(folderText(dir)).toContain(SECRET);
  return dir;
}

describe('a plain run sealed in', () => {
  it('keeps nothing readable, passes the checks of a sealed journal, and resumes with the keys (each effect once)', async () => {
    const keys = ring();
    const dir = await plainRun();
    const before = readFile(path.join(dir, 'journal.jsonl'), false);
    expect(before.records.some((stored) => stored.record.snapshot)).toBe(true);

    const report = await sealPlainRuns(dir, keys);
    expect(report).toMatchObject({ sealed: [path.join(dir, 'journal.jsonl')], held: [], failed: [] });
    const text = folderText(dir);
    for (const secret of [SECRET, TASK, SIGNAL_DATA, PLAIN_NAME, PICTURE.toString('base64').slice(0, 200)]) expect(text).not.toContain(secret);
    expect(blobFilesOf(dir).map((file) => isSealedBlobName(file.name))).toEqual([true]);

    // Whole: every checksum and the commit mark hold, and the same records in the same units.
    const after = readFile(path.join(dir, 'journal.jsonl'), false);
    expect(after.header).toMatchObject({ runId: before.header.runId, version: 5, sealed: expect.stringMatching(/^rk-/) });
    expect(after.cutEnd).toBeNull();
    // The mark counts every record read (the plain one counted those synced; the sealed journal is synced whole).
    expect(after.mark.records).toBe(before.records.length);
    expect(after.records.map((stored) => [stored.record.seq, stored.record.more, stored.record.event])).toEqual(before.records.map((stored) => [stored.record.seq, stored.record.more, stored.record.event]));
    // From the last snapshot: its link to the sealed line before it holds (else the reader falls back to the whole journal).
    const tail = readFile(path.join(dir, 'journal.jsonl'), true);
    expect(tail.records.length).toBeLessThan(after.records.length);
    expect(tail.records[0]!.record.snapshot).toBeDefined();

    // Without the keys: found and operated, its content refused naming the key.
    const unkeyed = await new FileStore(dir).load();
    expect(unkeyed.contentRefused).toBeInstanceOf(KeyNotGivenError);
    await expect(readRunTranscript(new FileStore(dir))).rejects.toBeInstanceOf(KeyNotGivenError);
    // The signal waits sealed, bound to the run: it opens once the run is read with the keys.
    expect(String((await new FileStore(dir).signals.waiting())[0]!.data)).toMatch(/^sealed:1:rk-/);
    const keyed = new FileStore(dir, { keys });
    await keyed.load();
    expect((await keyed.signals.waiting()).map((signal) => signal.data)).toEqual([SIGNAL_DATA]);

    // With them: the transcript reads, and a resume goes on from the last effect (the second scan is not run again).
    const transcript = await readRunTranscript(new FileStore(dir, { keys }));
    expect(JSON.stringify(transcript)).toContain(TASK);
    scans = 0;
    const resumed = await resumeRun({ store: new FileStore(dir), keys, model: scriptedModel(script()), tools: [scanTool], snapshotEvery: 2 });
    expect(resumed.status).toBe('done');
    expect(scans).toBe(1);
    expect(folderText(dir)).not.toContain(SECRET);
    expect(blobFilesOf(dir).every((file) => isSealedBlobName(file.name))).toBe(true);

    // Run again: nothing left to do.
    const again = await sealPlainRuns(dir, keys);
    expect(again).toMatchObject({ sealed: [], finished: [], unchanged: [path.join(dir, 'journal.jsonl')] });
  });

  it('leaves a run whose lock a live process holds as it is, and seals it once that process let go', async () => {
    const keys = ring();
    const dir = await plainRun();
    const journal = fs.readFileSync(path.join(dir, 'journal.jsonl'));
    const lock = await new FileStore(dir).lock();
    const held = await sealPlainRuns(dir, keys);
    expect(held.sealed).toEqual([]);
    expect(held.held.map((entry) => [entry.journal, entry.error.name])).toEqual([[path.join(dir, 'journal.jsonl'), 'RunLockedError']]);
    expect(fs.readFileSync(path.join(dir, 'journal.jsonl')).equals(journal)).toBe(true);
    expect(fs.existsSync(path.join(dir, 'run-key.json'))).toBe(false);
    await lock.release();
    expect((await sealPlainRuns(dir, keys)).sealed).toEqual([path.join(dir, 'journal.jsonl')]);
    expect(folderText(dir)).not.toContain(SECRET);

    // Sealed, with nothing left plain: a rotation does not need its lock.
    const driven = await new FileStore(dir).lock();
    expect(await sealPlainRuns(dir, keys)).toMatchObject({ unchanged: [path.join(dir, 'journal.jsonl')], held: [] });
    // A request written plain (by a process that read the run before it was sealed) waits for the lock to be sealed.
    await new FileControlInbox(dir).write({ kind: 'cancel', by: 'ops', reason: REASON, at: Date.now() });
    expect((await sealPlainRuns(dir, keys)).held.map((entry) => entry.sealed)).toEqual([true]);
    expect(folderText(dir)).toContain(REASON);
    await driven.release();
    expect(await sealPlainRuns(dir, keys)).toMatchObject({ finished: [path.join(dir, 'journal.jsonl')], held: [] });
    expect(folderText(dir)).not.toContain(REASON);
    const keyed = new FileStore(dir, { keys });
    await keyed.load();
    expect(keyed.control.get('cancel')).toMatchObject({ reason: REASON });
  });

  it('seals a plain run only when asked: a run left alone stays plain, and reads and resumes without keys', async () => {
    const dir = await plainRun();
    const before = readFile(path.join(dir, 'journal.jsonl'), false);
    scans = 0;
    const resumed = await resumeRun({ store: new FileStore(dir), keys: ring(), model: scriptedModel(script()), tools: [scanTool] });
    expect(resumed.status).toBe('done');
    const after = readFile(path.join(dir, 'journal.jsonl'), false);
    expect(after.header.sealed).toBeUndefined();
    // Its lines as written, and plain ones after them.
    expect(after.records.slice(0, before.records.length).map((stored) => stored.crc)).toEqual(before.records.map((stored) => stored.crc));
    expect(after.records.some((stored) => 'sealed' in stored.record)).toBe(false);
    expect(folderText(dir)).toContain(SECRET);
  });
});

describe('a long journal sealed in', () => {
  const TSX = pathToFileURL(createRequire(path.join(REPO, 'package.json')).resolve('tsx')).href;
  const TAKER = path.join(REPO, 'test', 'fixtures', 'lock-taker-elsewhere.ts');
  const LEASE_MS = 2_000;
  const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

  it("keeps its run's lock beating while it is rewritten: a process on another host trying to take the lock finds it live all along", async () => {
    const keys = ring();
    const dir = path.join(tempDir('da-seal-in-long-'), '.durable-agent');
    const writer = new RunFolderStore(dir);
    const written = await writer.lock();
    await writer.create({ format: JOURNAL_FORMAT, version: JOURNAL_VERSION, runId: 'long', createdAt: 1 }, storeRecord(0, { task: TASK }));
    const RECORDS = 3_000;
    for (let seq = 1; seq < RECORDS; seq += 100) await writer.appendBatch(Array.from({ length: Math.min(100, RECORDS - seq) }, (_, at) => storeRecord(seq + at)));
    await written.release();

    // The rewrite is slowed, record by record, until the process elsewhere has tried for twice
    // the lease since it was first refused: without a heartbeat through it, that process would
    // find the lock's heartbeat older than the lease and take the lock over.
    const result = path.join(path.dirname(dir), 'taker.json');
    let taker: ReturnType<typeof spawn> | null = null;
    let exited: Promise<number | null> = Promise.resolve(null);
    const report = await sealPlainRuns(dir, keys, {
      lockLeaseMs: LEASE_MS,
      onRecord: (seq) => {
        if (seq === 0) {
          taker = spawn(process.execPath, ['--import', TSX, TAKER, path.join(dir, 'lock'), result, String(LEASE_MS), String(2 * LEASE_MS)], { stdio: ['ignore', 'ignore', 'inherit'] });
          const child = taker;
          exited = new Promise((resolve) => child.once('exit', resolve));
        }
        if (!fs.existsSync(result)) sleepSync(20);
      },
    });
    expect(await exited).toBe(0);
    expect(taker).not.toBeNull();
    const found = JSON.parse(fs.readFileSync(result, 'utf8')) as { found: string; refused: number };
    expect(found.found).toBe('refused');
    expect(found.refused).toBeGreaterThan(0);
    expect(report).toMatchObject({ sealed: [path.join(dir, 'journal.jsonl')], failed: [], held: [] });
    const after = readFile(path.join(dir, 'journal.jsonl'), false);
    expect(after.header.sealed).toMatch(/^rk-/);
    expect(after.records).toHaveLength(RECORDS);
    expect(folderText(dir)).not.toContain(TASK);
  }, 120_000);
});
