/**
 * `keys rotate --seal-plain`: the plain runs of a state folder sealed in. A run started without
 * keys stays plain until this is asked for; then each gets a run key of its own and its whole
 * stored content is written again sealed, as a run started with the keys would have written it:
 * its journal's records (checksums, commit mark and snapshot links computed over the sealed lines),
 * its blobs (sealed, under keyed names), the decisions, requests and signals waiting in its inboxes.
 *
 * A run is sealed in only while this holds its lock: a run driven by a live process is left as it
 * is and reported (a later rotation takes it). In this order, each step durable before the next:
 *  1. the run key, wrapped, in run-key.json (a plain journal ignores it: the run still reads plain);
 *  2. the payloads of its blobs, sealed under new names (the plain journal does not refer to them),
 *     and the sealed journal in a temp file, a few records at a time, each blob before its record;
 *  3. the temp journal, fsynced, renamed over the plain one and the folder fsynced: a reader opens
 *     the plain journal or the sealed one, never a mix;
 *  4. the inbox entries, each replaced whole (a sealed run takes an unmarked entry as it is);
 *  5. the blobs no journal refers to any more (the plain ones) removed.
 * A kill at any instant leaves the run readable, plain (before 3) or sealed (after it), and a
 * rotation run again finishes it: a plain run starts over under a new key (what a killed attempt
 * left is sealed and referred to by nothing, removed in 5), a sealed one gets steps 4 and 5.
 */
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setImmediate } from 'node:timers/promises';
import { BlobSealer } from '../seal/blob-seal.ts';
import { type RunKey, createRunKey, unwrapRunKey } from '../seal/envelope.ts';
import type { MasterKeys } from '../seal/keys.ts';
import { sealRecordContent } from '../seal/record-content.ts';
import { sealerFor } from '../seal/value-codec.ts';
import { fsyncDir } from '../util/durable-file.ts';
import { BLOBS_DIR, FileBlobs, blobFilesOf, blobNamesIn } from './blobs.ts';
import { CutJournalNotSealedError, RunKeyMissingError, RunLockedError } from './errors.ts';
import { FileControlInbox } from './inbox/file-control-inbox.ts';
import { FileDecisionInbox } from './inbox/file-decision-inbox.ts';
import { FileSignalInbox } from './inbox/file-signal-inbox.ts';
import { CHECKSUM_HEX_DIGITS, frameCommitMark, frameLine } from './journal/framing.ts';
import { JOURNAL_VERSION_SEALED, type JournalHeader, type JournalRecord } from './journal/journal-record.ts';
import { type ReadJournal, readJournal } from './journal/journal-reader.ts';
import { fileBytes, JOURNAL_FILE, RunFolderStore } from './file-store.ts';
import { readRunKeyFile, runFoldersOf, runKeyPathOf, writeRunKeyFile } from './run-key-file.ts';
import { PRIVATE_FILE } from './state-folder.ts';

/** Where a sealing-in passes, each step durable: the drills kill the process there. */
export type SealInPoint = 'run-key' | 'blobs' | 'journal-temp' | 'journal-swapped' | 'inboxes';
export const SEAL_IN_POINTS: readonly SealInPoint[] = ['run-key', 'blobs', 'journal-temp', 'journal-swapped', 'inboxes'];

/** What sealing in did, by journal path. */
export interface SealInReport {
  /** Plain runs now sealed. */
  sealed: string[];
  /** Sealed runs whose inbox entries written plain were sealed, or plain blobs no journal refers to removed (a rotation killed mid-way, finished). */
  finished: string[];
  /** Runs sealed already, with nothing left to do. */
  unchanged: string[];
  /**
   * Runs a live process holds: left as they are, for a later rotation. `sealed`: a sealed run
   * with something left plain to finish (an inbox entry, a plain blob); else a plain run.
   */
  held: Array<{ journal: string; sealed: boolean; error: RunLockedError }>;
  failed: Array<{ journal: string; error: Error }>;
}

/** The temp file a sealed journal is written to before it replaces the plain one. */
const SEALED_TEMP = `${JOURNAL_FILE}.seal-`;

/** Records whose blobs are read and sealed together (a blob restated by several is read once). */
const RECORDS_AT_A_TIME = 32;
/** The longest the rewrite of a journal goes on without a turn of the event loop, where the run lock's heartbeat beats. */
const TURN_EVERY_MS = 10;

export interface SealInOptions {
  /** Drills: called as a run's sealing-in passes a point (a test kills the process there). */
  onPoint?: ((point: SealInPoint, journal: string) => void) | undefined;
  /** Called as each record of a run's sealed journal is written (tests slow the rewrite with it). */
  onRecord?: ((seq: number) => void) | undefined;
  /** The lease of the run locks taken (see FileStoreOptions.lockLeaseMs). */
  lockLeaseMs?: number | undefined;
}

/** Seals in every plain run of a state folder (its own run, its runs by id); see the top of this file. */
export async function sealPlainRuns(stateFolder: string, keys: MasterKeys, options: SealInOptions = {}): Promise<SealInReport> {
  const report: SealInReport = { sealed: [], finished: [], unchanged: [], held: [], failed: [] };
  for (const folder of runFoldersOf(stateFolder)) {
    const journal = path.join(folder, JOURNAL_FILE);
    if (!fs.existsSync(journal)) continue;
    try {
      const done = await sealInRun(folder, keys, { ...options, onPoint: (point) => options.onPoint?.(point, journal) });
      report[done].push(journal);
    } catch (error) {
      if (error instanceof RunLockedError) report.held.push({ journal, sealed: isSealedJournal(journal), error });
      else report.failed.push({ journal, error: error as Error });
    }
  }
  return report;
}

type RunSealIn = Omit<SealInOptions, 'onPoint'> & { onPoint: (point: SealInPoint) => void };

async function sealInRun(folder: string, keys: MasterKeys, options: RunSealIn): Promise<'sealed' | 'finished' | 'unchanged'> {
  const { onPoint } = options;
  const journalPath = path.join(folder, JOURNAL_FILE);
  // A sealed run with nothing left plain is not locked: a run being driven is no obstacle to it.
  if (isSealedJournal(journalPath) && !leftPlain(folder)) return 'unchanged';
  const store = new RunFolderStore(folder, { lockLeaseMs: options.lockLeaseMs });
  const lock = await store.lock();
  try {
    removeSealedTemps(folder);
    const read = readWhole(journalPath);
    const { header } = read;
    if (read.cutEnd) throw new CutJournalNotSealedError(header.runId, journalPath, read.cutEnd.bytes);
    if (header.sealed !== undefined) {
      const wrapped = readRunKeyFile(folder, header.runId);
      if (wrapped === null) throw new RunKeyMissingError(header.runId, header.sealed, runKeyPathOf(folder));
      const changed = finish(folder, await unwrapRunKey(wrapped, keys, header.runId), header.runId, onPoint);
      return changed ? 'finished' : 'unchanged';
    }
    const { runKey, wrapped } = await createRunKey(keys);
    writeRunKeyFile(folder, wrapped);
    onPoint('run-key');
    const temp = `${journalPath}.seal-${process.pid}`;
    try {
      await writeSealedJournal(folder, read, runKey, temp, options.onRecord);
      onPoint('blobs');
      onPoint('journal-temp');
      // A rotation whose lock was taken over meanwhile leaves the journal to its new holder.
      await store.assertOwnership();
    } catch (error) {
      fs.rmSync(temp, { force: true });
      throw error;
    }
    swapIn(temp, journalPath, onPoint);
    finish(folder, runKey, header.runId, onPoint);
    return 'sealed';
  } finally {
    await lock.release();
  }
}

/** The journal read whole: under the run's lock, so no writer appends meanwhile. */
function readWhole(journalPath: string): ReadJournal {
  const fd = fs.openSync(journalPath, 'r');
  try {
    return readJournal(journalPath, fileBytes(fd));
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Whether the journal's header names a run key, read without the lock: the header line is written
 * once, with the journal, so a writer appending meanwhile does not change it. A header that does
 * not parse says "not sealed": the run is then locked and read whole, which says what is wrong.
 */
function isSealedJournal(journalPath: string): boolean {
  const fd = fs.openSync(journalPath, 'r');
  try {
    const bytes = fileBytes(fd);
    for (let want = 16 * 1024; ; want *= 4) {
      const head = bytes.read(0, want);
      const end = head.indexOf(0x0a);
      if (end !== -1) return typeof (JSON.parse(head.toString('utf8', CHECKSUM_HEX_DIGITS + 1, end)) as Partial<JournalHeader>).sealed === 'string';
      if (head.length < want) return false;
    }
  } catch {
    return false;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Writes to `temp` the journal as a run started with this key would have written it, and fsyncs
 * it: the header naming the run key (version 5), each record's payloads in sealed blobs (written
 * here, durably) and its content sealed, the units kept (`more`), each snapshot linked to the
 * checksum of the sealed line before it, and a commit mark counting them all.
 *
 * A few records at a time, each written as it is sealed, with a turn of the event loop between:
 * a long journal is never held sealed in memory whole, and the run lock's heartbeat keeps beating
 * while it is rewritten (a lock whose heartbeat stopped for its lease is taken over from another host).
 */
async function writeSealedJournal(folder: string, read: ReadJournal, runKey: RunKey, temp: string, onRecord: ((seq: number) => void) | undefined): Promise<void> {
  const runId = read.header.runId;
  const journalPath = path.join(folder, JOURNAL_FILE);
  const plainBlobs = new FileBlobs(folder);
  const blobSealer = new BlobSealer(runKey, runId);
  const sealedBlobs = new FileBlobs(folder, { sealing: () => ({ sealed: true, sealer: blobSealer }) });
  const sealer = sealerFor(runKey, runId);
  const header: JournalHeader = { ...read.header, version: Math.max(read.header.version, JOURNAL_VERSION_SEALED), sealed: runKey.id };
  const head = frameLine(header);
  // The mark's fields have a fixed width: the records go after its place, and it is written once they are counted.
  const markAt = head.length;
  let at = markAt + frameCommitMark({ records: 0, bytes: 0 }).length;
  let before: { seq: number; crc: string } | null = null;
  let turned = performance.now();
  const fd = fs.openSync(temp, 'w', PRIVATE_FILE);
  try {
    for (let from = 0; from < read.records.length; from += RECORDS_AT_A_TIME) {
      const opened = plainBlobs.resolve(read.records.slice(from, from + RECORDS_AT_A_TIME), journalPath).map((stored) => stored.record);
      for (const record of sealedBlobs.externalize(opened)) {
        let sealed: JournalRecord = sealRecordContent(record, sealer);
        const after = sealed.snapshot?.after;
        if (after && before && after.seq === before.seq) sealed = { ...sealed, snapshot: { ...sealed.snapshot!, after: { seq: after.seq, crc: before.crc } } };
        const line = frameLine(sealed);
        at += writeAt(fd, line, at);
        before = { seq: record.seq, crc: line.toString('latin1', 0, CHECKSUM_HEX_DIGITS) };
        onRecord?.(record.seq);
        if (performance.now() - turned >= TURN_EVERY_MS) {
          await setImmediate();
          turned = performance.now();
        }
      }
    }
    writeAt(fd, head, 0);
    writeAt(fd, frameCommitMark({ records: read.records.length, bytes: at }), markAt);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function writeAt(fd: number, bytes: Buffer, position: number): number {
  let done = 0;
  while (done < bytes.length) done += fs.writeSync(fd, bytes, done, bytes.length - done, position + done);
  return bytes.length;
}

/** The sealed journal, whole and fsynced in its temp file, in place of the plain one: renamed over it, the folder fsynced. */
function swapIn(temp: string, journalPath: string, onPoint: (point: SealInPoint) => void): void {
  try {
    fs.renameSync(temp, journalPath);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
  fsyncDir(path.dirname(journalPath));
  onPoint('journal-swapped');
}

/** Steps 4 and 5 for a sealed run: its inbox entries written plain sealed, and the blobs no journal refers to removed. Whether anything changed. */
function finish(folder: string, runKey: RunKey, runId: string, onPoint: (point: SealInPoint) => void): boolean {
  const sealer = sealerFor(runKey, runId);
  const entries = new FileDecisionInbox(folder).sealPlainEntries(sealer) + new FileControlInbox(folder).sealPlainEntries(sealer) + new FileSignalInbox(folder).sealPlainEntries(sealer);
  onPoint('inboxes');
  return entries + removeUnreferencedBlobs(folder) > 0;
}

/**
 * Removes the blobs of the folder no journal (the current one, an archived one) refers to: the
 * plain ones the sealed journal replaced, and sealed ones a killed attempt wrote under a key it
 * never used. Under the run's lock, as prune removes them: no writer is between a blob and its record.
 */
function removeUnreferencedBlobs(folder: string): number {
  const files = blobFilesOf(folder);
  if (files.length === 0) return 0;
  const archive = path.join(folder, 'archive');
  const journals = [path.join(folder, JOURNAL_FILE), ...namesIn(archive).filter((name) => /^journal-.*\.jsonl$/.test(name)).map((name) => path.join(archive, name))];
  const referenced = new Set<string>();
  for (const journal of journals) {
    try {
      blobNamesIn(readWhole(journal).records.map((stored) => stored.record), referenced);
    } catch {
      // A journal that cannot be read may refer to any of them: none is removed (prune keeps them so too).
      return 0;
    }
  }
  const unused = files.filter((file) => file.partial || !referenced.has(file.name));
  const dir = path.join(folder, BLOBS_DIR);
  for (const blob of unused) fs.rmSync(path.join(dir, blob.name), { force: true });
  if (unused.length > 0) fsyncDir(dir);
  return unused.length;
}

/** Whether a sealed run may still hold something plain a sealing-in left (a kill mid-way): a plain blob, an inbox entry without the mark, a temp journal. */
function leftPlain(folder: string): boolean {
  if (namesIn(folder).some((name) => name.startsWith(SEALED_TEMP))) return true;
  if (blobFilesOf(folder).some((file) => file.partial || file.name.startsWith('sha256-'))) return true;
  for (const inbox of [new FileDecisionInbox(folder).dir, new FileControlInbox(folder).dir, new FileSignalInbox(folder).dir]) {
    for (const name of namesIn(inbox)) {
      if (!/\.(json|taken)$/.test(name)) continue;
      // Conservative: any entry without a sealed mark has the run locked and looked at.
      if (entryLeftPlain(path.join(inbox, name))) return true;
    }
  }
  return false;
}

/** What a killed sealing-in left of its temp journal (sealed bytes, referred to by nothing): under the lock, no attempt is at work. */
function removeSealedTemps(folder: string): void {
  const temps = namesIn(folder).filter((name) => name.startsWith(SEALED_TEMP));
  for (const name of temps) fs.rmSync(path.join(folder, name), { force: true });
  if (temps.length > 0) fsyncDir(folder);
}

/** Whether an inbox file lacks the sealed mark; one gone meanwhile (its run's writer settled it) lacks nothing. */
function entryLeftPlain(file: string): boolean {
  try {
    return !fs.readFileSync(file, 'utf8').includes('"sealed":');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

function namesIn(dir: string): string[] {
  try {
    return fs.readdirSync(dir).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
