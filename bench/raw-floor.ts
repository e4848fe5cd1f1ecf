/**
 * The raw floor: what the disk alone charges for our store's durability. The same bytes as a
 * journal our store wrote, appended piece by piece with an fsync exactly where our store waited
 * for one, and no logic at all (the pieces are cut beforehand). Our store's cost per turn is
 * compared with it.
 *
 * The paced floor (a diagnostic, never what a target is judged against): the same, with the
 * in-memory loop's own time spent busy between the appends. A disk's fsync can cost more when
 * the CPU computes between calls than back to back, and any store driven by a loop pays that;
 * the paced floor shows how much of our overhead is that price and how much is our own CPU.
 */
import fs from 'node:fs';
import path from 'node:path';
import { FileStore, JOURNAL_FILE } from '../src/store/file-store.ts';
import { frameCommitMark } from '../src/store/journal/framing.ts';
import type { JournalRecord } from '../src/store/journal/journal-record.ts';
import type { AppendOptions, AppendReceipt } from '../src/store/store.ts';
import { fsyncDir } from '../src/util/durable-file.ts';

export interface FloorPlan {
  /** Header, commit mark and first record (written together when the run is created), then one piece per appended record. */
  chunks: Buffer[];
  /** For each appended record, whether our store waited for the disk (chunks[i + 1]). */
  synced: boolean[];
}

/** Our file store, noting for each append whether it waited for the disk. */
export class SyncTracingFileStore extends FileStore {
  readonly synced: boolean[] = [];

  override async append(record: JournalRecord, options: AppendOptions = {}): Promise<AppendReceipt> {
    const receipt = await super.append(record, options);
    this.synced.push(options.sync !== false);
    return receipt;
  }
}

export function floorPlanOf(store: SyncTracingFileStore): FloorPlan {
  const bytes = fs.readFileSync(path.join(store.dir, JOURNAL_FILE));
  const chunks: Buffer[] = [];
  let start = 0;
  let lines = 0;
  for (let end = bytes.indexOf(0x0a); end !== -1; end = bytes.indexOf(0x0a, end + 1)) {
    lines += 1;
    // Lines 1-3 (header, commit mark, record 0) make up the first write.
    if (lines < 3) continue;
    chunks.push(bytes.subarray(start, end + 1));
    start = end + 1;
  }
  if (chunks.length !== store.synced.length + 1) throw new Error(`the journal holds ${chunks.length} records, the store appended ${store.synced.length} after the first`);
  return { chunks, synced: store.synced.slice() };
}

/**
 * Writes the plan to a new file in `dir`: the first piece fsynced with the directory (a new
 * file's name must be made durable too, as our store's create does), then each further piece
 * appended, and fdatasynced where our store did. With `paceMs`, that long is spent busy before
 * each piece (the paced floor); returns the time spent busy.
 */
export function appendWithSyncs(dir: string, plan: FloorPlan, paceMs = 0): number {
  let busyMs = 0;
  fs.mkdirSync(dir, { recursive: true });
  const fd = fs.openSync(path.join(dir, 'floor.jsonl'), 'w');
  try {
    let end = 0;
    plan.chunks.forEach((chunk, index) => {
      if (paceMs > 0) busyMs += busyFor(paceMs);
      for (let done = 0; done < chunk.length; ) done += fs.writeSync(fd, chunk, done, chunk.length - done, end + done);
      end += chunk.length;
      if (index === 0) {
        fs.fsyncSync(fd);
        fsyncDir(dir);
      } else if (plan.synced[index - 1]) {
        fs.fdatasyncSync(fd);
      }
    });
  } finally {
    fs.closeSync(fd);
  }
  return busyMs;
}

/**
 * The pace of the paced floor: the in-memory loop's run time (same T, same repetition) spread
 * evenly over the pieces, so the paced floor computes as long as our loop does when it writes
 * nothing. Not the gaps of our durable run: those hold our own persistence CPU, which is what
 * the paced floor must leave out to tell it apart.
 */
export function paceOf(memoryRunMs: number, plan: FloorPlan): number {
  return memoryRunMs / plan.chunks.length;
}

/** Spins (the CPU busy, as a loop computing is; not asleep) for `ms`; the time it took. */
function busyFor(ms: number): number {
  const start = performance.now();
  let now = start;
  while (now - start < ms) now = performance.now();
  return now - start;
}

/**
 * How the raw floor's bytes reach the file, for what the number of write calls costs:
 * - 'ours': as our store does it, each record its own write and, at each fdatasync, the commit
 *   mark rewritten in place before it (6 writes and 2 fdatasyncs a one-call turn);
 * - 'lines': each record its own write, no mark (the raw floor: 4 writes a turn);
 * - 'one-per-sync': the records up to each fdatasync in one write, no mark (2 writes a turn).
 */
export const WRITE_SHAPES = ['ours', 'lines', 'one-per-sync'] as const;
export type WriteShape = (typeof WRITE_SHAPES)[number];

export interface WriteShapeCounts {
  writes: number;
  syncs: number;
}

/**
 * Writes the plan to a new file in `dir` in the given shape (the first piece fsynced with the
 * directory, as appendWithSyncs does, and not counted); the write calls and fdatasyncs after it.
 */
export function writeInShape(dir: string, plan: FloorPlan, shape: WriteShape): WriteShapeCounts {
  fs.mkdirSync(dir, { recursive: true });
  const first = plan.chunks[0]!;
  // The first piece is the header line, the commit mark, then record 0: the mark sits after the first newline.
  const markOffset = first.indexOf(0x0a) + 1;
  const counts: WriteShapeCounts = { writes: 0, syncs: 0 };
  const fd = fs.openSync(path.join(dir, 'floor.jsonl'), 'w');
  const write = (buffer: Buffer, at: number) => {
    for (let done = 0; done < buffer.length; ) done += fs.writeSync(fd, buffer, done, buffer.length - done, at + done);
    counts.writes += 1;
  };
  try {
    write(first, 0);
    counts.writes = 0;
    fs.fsyncSync(fd);
    fsyncDir(dir);
    let end = first.length;
    let records = 1;
    let pending: Buffer[] = [];
    for (let index = 1; index < plan.chunks.length; index++) {
      const chunk = plan.chunks[index]!;
      records += 1;
      if (shape === 'one-per-sync') pending.push(chunk);
      else write(chunk, end);
      end += chunk.length;
      if (!plan.synced[index - 1]) continue;
      if (shape === 'one-per-sync') {
        const joined = Buffer.concat(pending);
        write(joined, end - joined.length);
        pending = [];
      }
      if (shape === 'ours') write(frameCommitMark({ records, bytes: end }), markOffset);
      fs.fdatasyncSync(fd);
      counts.syncs += 1;
    }
    if (pending.length > 0) write(Buffer.concat(pending), end - pending.reduce((sum, chunk) => sum + chunk.length, 0));
  } finally {
    fs.closeSync(fd);
  }
  return counts;
}
