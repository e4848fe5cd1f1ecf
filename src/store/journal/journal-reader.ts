/**
 * Reads a journal file's bytes into a header and records, or refuses them. The one kind of
 * damage recovered from is a cut-off end of the file: the record a crash interrupted (not yet
 * committed), or, when the caller accepts the loss, the last committed record. Anything more,
 * or any damage inside, is refused: a half-right state is never guessed.
 */
import { AGENT_STATES, type AgentStateName } from '../../../machines/agent-loop.types.ts';
import { type JournalDamage, StoreCorruptError, StoreLostRecordError, StoreVersionError } from '../errors.ts';
import type { CommitMark, FramedJournal, FramedLine } from './framing.ts';
import { CHECKSUM_HEX_DIGITS, COMMIT_MARK_BYTES, FrameError, parseCommitMark, parseFrames, parseLine } from './framing.ts';
import type { JournalHeader, JournalRecord, RecordEvent } from './journal-record.ts';
import { RECORD_EVENTS } from './journal-record.ts';
import { isReadableVersion, JOURNAL_FORMAT, JOURNAL_VERSION } from './journal-record.ts';
import { describePoint, pointOf } from './record-points.ts';
import type { StoredRecord } from '../store.ts';

const STATES = new Set<AgentStateName>(AGENT_STATES);
const EVENTS = new Set<RecordEvent>(RECORD_EVENTS);

export interface CutEnd {
  offset: number;
  bytes: number;
  /** Set when the record lost had been committed and the caller accepted losing it. */
  lostCommittedRecord: number | null;
}

export interface ReadJournal {
  header: JournalHeader;
  mark: CommitMark;
  markOffset: number;
  records: StoredRecord[];
  /** The end of the file that a resume drops, if it is cut off. */
  cutEnd: CutEnd | null;
  /** Where the intact journal ends: the next record goes there. */
  goodLength: number;
}

/**
 * A journal's bytes, read a piece at a time, so that loading a long run never holds the file's
 * bytes and its parsed records in memory together (a buffer in memory qualifies too).
 */
export interface JournalBytes {
  /**
   * How many bytes there are now. A file that a live writer appends to grows: the reader asks
   * once, right after reading the commit mark, so every record that mark counts lies within the
   * bytes it reads (a writer writes a record before it rewrites the mark to count it).
   */
  readonly length: number;
  /** Up to `length` bytes from `start`; fewer at the end of the bytes. */
  read(start: number, length: number): Buffer;
}

export interface ReadOptions {
  /** How much is read at a time (tests use tiny pieces). */
  pieceBytes?: number;
  /**
   * Recover a journal that ends inside its last committed record to the record before it,
   * instead of refusing it. A person's decision: see StoreLostRecordError.
   */
  acceptLostRecord?: boolean;
  /**
   * Read from the last snapshot record on, scanning back from the end (see readFromLastSnapshot).
   * Whatever that scan finds unusual, the whole journal is read instead, as without this option.
   */
  fromLastSnapshot?: boolean;
  /**
   * With fromLastSnapshot: a journal whose last record is a final one (it carries a final mark)
   * and ends, committed, right after it is read as that record alone (see readFinalRecord).
   */
  finalRecord?: boolean;
  /**
   * Told the header as soon as it is read, before any record is: a caller that refuses the run
   * for what its header says (a resume whose settings changed) throws here, and the records are
   * never parsed. It may be told more than once (a scan that falls back to the whole journal).
   */
  onHeader?: ((header: JournalHeader) => void) | undefined;
}

/** Pieces large enough that reading them costs nothing next to parsing them. */
export const PIECE_BYTES = 1 << 20;
/** What is read first for the header line. */
const HEADER_PIECE_BYTES = 16 * 1024;

export function readJournal(location: string, bytes: Buffer | JournalBytes, options: ReadOptions = {}): ReadJournal {
  const source: JournalBytes = Buffer.isBuffer(bytes)
    ? { length: bytes.length, read: (start, length) => bytes.subarray(start, start + length) }
    : bytes;
  const pieceBytes = options.pieceBytes ?? PIECE_BYTES;
  if (options.fromLastSnapshot && options.finalRecord) {
    const final = readFinalRecord(location, source, pieceBytes, options.onHeader);
    if (final) return final;
  }
  if (options.fromLastSnapshot) {
    const tail = readFromLastSnapshot(location, source, pieceBytes, options.onHeader);
    if (tail) return tail;
  }
  return readFrames(location, source, pieceBytes, options.acceptLostRecord === true, options.onHeader);
}

interface JournalStart {
  header: JournalHeader;
  mark: CommitMark;
  markOffset: number;
}

function readStart(location: string, bytes: JournalBytes, pieceBytes: number, onHeader: ReadOptions['onHeader']): JournalStart {
  // A header is a few hundred bytes: a long one is found by reading twice as much each time.
  const headerEnd = firstNewline(bytes, Math.min(pieceBytes, HEADER_PIECE_BYTES));
  if (headerEnd === -1) throw new StoreCorruptError(location, 1, 0, 'the journal has no complete header line', 'start');
  const markOffset = headerEnd + 1;
  const head = bytes.read(0, markOffset + COMMIT_MARK_BYTES);
  const header = startFrame(location, () => parseFrames(head.subarray(0, markOffset)).lines[0]?.document) as Partial<JournalHeader> | null;
  if (!header || typeof header !== 'object' || header.format !== JOURNAL_FORMAT) {
    throw new StoreCorruptError(location, 1, 0, `the first line is not a ${JOURNAL_FORMAT} header`, 'start');
  }
  if (!isReadableVersion(header.version)) throw new StoreVersionError(location, header.version, JOURNAL_VERSION);
  if (typeof header.runId !== 'string') throw new StoreCorruptError(location, 1, 0, 'the header has no run id', 'start');

  const mark = startFrame(location, () => parseCommitMark(head, markOffset, 2));
  onHeader?.(header as JournalHeader);
  return { header: header as JournalHeader, mark, markOffset };
}

function readFrames(location: string, bytes: JournalBytes, pieceBytes: number, acceptLostRecord: boolean, onHeader?: ReadOptions['onHeader']): ReadJournal {
  const { header, mark, markOffset } = readStart(location, bytes, pieceBytes, onHeader);
  // The length only now, after the mark: see JournalBytes.length.
  const length = bytes.length;
  const framed = framesOrDamage(location, bytes, markOffset + COMMIT_MARK_BYTES, length, pieceBytes);
  const records: StoredRecord[] = framed.lines.map((line, index) => {
    const problem = recordProblem(line.document, index);
    if (problem) throw new StoreCorruptError(location, index + 3, line.offset, problem, index === framed.lines.length - 1 ? 'last' : 'inside');
    return { record: line.document as JournalRecord, bytes: line.bytes, offset: line.offset, crc: line.crc };
  });

  const unit = cutOffUnit(records, mark, length, acceptLostRecord, location, bytes);
  if (unit) {
    records.length = unit.first;
    return { header: header as JournalHeader, mark, markOffset, records, cutEnd: unit.cutEnd, goodLength: unit.cutEnd.offset };
  }
  const complete = records.length;
  if (complete === 0) throw new StoreCorruptError(location, 3, framed.goodLength, 'the journal holds no complete record', 'cut-short');
  if (complete < mark.records - 1) {
    throw new StoreCorruptError(
      location,
      complete + 3,
      framed.goodLength,
      `the file ends after record ${complete - 1}, but ${mark.records} records were committed (${mark.bytes} bytes): ` +
        `records ${complete} to ${mark.records - 1} are missing`,
      'cut-short',
    );
  }
  let cutEnd: CutEnd | null = null;
  if (complete === mark.records - 1) {
    const cut = { offset: framed.goodLength, bytes: length - framed.goodLength };
    if (!acceptLostRecord) {
      const what = recordKindOf(bytes.read(cut.offset, Math.min(cut.bytes, 4096)));
      throw new StoreLostRecordError(location, complete + 3, cut.offset, complete, what, cut.bytes);
    }
    cutEnd = { ...cut, lostCommittedRecord: complete };
  } else if (framed.tornTail) {
    cutEnd = { ...framed.tornTail, lostCommittedRecord: null };
  }
  return { header, mark, markOffset, records, cutEnd, goodLength: framed.goodLength };
}

/**
 * The records from the last snapshot on, found by reading back from the end of the file: what
 * a resume reads grows with the records since the last snapshot, not with the run. The
 * snapshot's link to the line before it (number and checksum) is checked there. A side index
 * of snapshot offsets would save the scan, but would be a second file to keep in step with the
 * journal (and a stale one to detect); the scan reads only what the fold needs anyway.
 *
 * Null when anything is not the plain case (a damaged line, a number out of order, a snapshot
 * whose link does not match, records the mark counts missing): the caller then reads the whole
 * journal, which refuses damage with the usual precise message or recovers what it can.
 */
function readFromLastSnapshot(location: string, bytes: JournalBytes, pieceBytes: number, onHeader: ReadOptions['onHeader']): ReadJournal | null {
  const { header, mark, markOffset } = readStart(location, bytes, pieceBytes, onHeader);
  const length = bytes.length;
  const recordsStart = markOffset + COMMIT_MARK_BYTES;
  const back = new BackwardLines(bytes, recordsStart, length, pieceBytes);
  const lastNewline = back.newlineBefore(length);
  if (lastNewline < recordsStart) return null;
  const found: StoredRecord[] = [];
  let end = lastNewline;
  for (;;) {
    const line = back.lineEndingAt(end);
    if (!line) return null;
    const expected = found.length === 0 ? (line.record as Partial<JournalRecord>)?.seq : found[found.length - 1]!.record.seq - 1;
    if (typeof expected !== 'number' || recordProblem(line.record, expected)) return null;
    found.push(line as StoredRecord);
    const record = line.record as JournalRecord;
    if (record.snapshot || line.offset === recordsStart) {
      if (record.seq === 0 ? line.offset !== recordsStart : !record.snapshot) return null;
      if (record.snapshot) {
        const before = back.lineEndingAt(line.offset - 1);
        const after = record.snapshot.after;
        if (!before || !after || (before.record as Partial<JournalRecord>)?.seq !== after.seq || before.crc !== after.crc) return null;
      }
      break;
    }
    end = line.offset - 1;
  }
  found.reverse();
  if (found[found.length - 1]!.record.seq + 1 < mark.records) return null;
  const goodLength = lastNewline + 1;
  const cutEnd = goodLength < length ? { offset: goodLength, bytes: length - goodLength, lostCommittedRecord: null } : null;
  return { header, mark, markOffset, records: found, cutEnd, goodLength };
}

/**
 * The last record alone, when it is a final record (final mark) that the commit mark counts as
 * the last one committed, and the file ends right after it (nothing torn, nothing uncommitted):
 * what a resume that only answers needs, read in time that does not grow with the run. The
 * line before it is read and checked too (it parses, its checksum holds, its number is the one
 * before), as a snapshot's link is.
 *
 * Null when anything is not the plain case: the caller reads from the last snapshot instead,
 * which refuses damage or recovers a cut-off end as it always did.
 */
function readFinalRecord(location: string, bytes: JournalBytes, pieceBytes: number, onHeader: ReadOptions['onHeader']): ReadJournal | null {
  const { header, mark, markOffset } = readStart(location, bytes, pieceBytes, onHeader);
  const length = bytes.length;
  if (mark.bytes !== length || mark.records < 2) return null;
  const recordsStart = markOffset + COMMIT_MARK_BYTES;
  // A final record is small: a piece of a few lines' size, not the default megabyte.
  const back = new BackwardLines(bytes, recordsStart, length, Math.min(pieceBytes, FINAL_PIECE_BYTES));
  const lastNewline = back.newlineBefore(length);
  if (lastNewline !== length - 1) return null;
  const line = back.lineEndingAt(lastNewline);
  const record = line?.record as Partial<JournalRecord> | undefined;
  if (!line || record?.final === undefined || record.more !== undefined || record.seq !== mark.records - 1 || recordProblem(record, mark.records - 1)) return null;
  const before = back.lineEndingAt(line.offset - 1);
  if (!before || recordProblem(before.record, mark.records - 2)) return null;
  return { header, mark, markOffset, records: [line as StoredRecord], cutEnd: null, goodLength: length };
}

/** What readFinalRecord reads at a time from the end. */
const FINAL_PIECE_BYTES = 16 * 1024;

/** A line read back from the end: a stored record once its document passes recordProblem. */
interface BackLine {
  record: unknown;
  bytes: number;
  offset: number;
  crc: string;
}

/** A journal's lines read from the end towards `start`, a piece at a time. */
class BackwardLines {
  /** Bytes [from, from + buffer.length) of the journal. */
  private buffer: Buffer = Buffer.alloc(0);
  private from: number;

  constructor(
    private readonly bytes: JournalBytes,
    private readonly start: number,
    length: number,
    private readonly pieceBytes: number,
  ) {
    this.from = length;
  }

  /** The offset of the last newline before `at`, or start - 1 when there is none. */
  newlineBefore(at: number): number {
    // A line longer than a piece is read in pieces twice as large each time, not copied over and over.
    for (let size = this.pieceBytes; ; size *= 2) {
      const found = at > this.from ? this.buffer.lastIndexOf(0x0a, at - this.from - 1) : -1;
      if (found !== -1) return this.from + found;
      if (this.from <= this.start) return this.start - 1;
      this.readMore(at, size);
    }
  }

  /**
   * The line whose newline is at `newline`, parsed and checked (framing.ts's rule), or null if it
   * does not parse (the caller then reads the whole journal, which says what is wrong); in the
   * shape of the stored record it becomes.
   */
  lineEndingAt(newline: number): BackLine | null {
    if (newline < this.start) return null;
    const offset = this.newlineBefore(newline) + 1;
    try {
      const record = parseLine(this.buffer, offset - this.from, newline - this.from, 0);
      const crc = this.buffer.toString('latin1', offset - this.from, offset - this.from + CHECKSUM_HEX_DIGITS);
      return { record, bytes: newline + 1 - offset, offset, crc };
    } catch (error) {
      if (error instanceof FrameError) return null;
      throw error;
    }
  }

  /** Reads the piece before what is held, keeping only what lies before `upTo` (the rest was read). */
  private readMore(upTo: number, size: number): void {
    const start = Math.max(this.start, this.from - size);
    const keep = Math.max(0, Math.min(this.buffer.length, upTo + 1 - this.from));
    // The few bytes kept (part of a line) are read again with the piece, rather than the whole
    // piece copied in front of them; unless the file no longer holds them all.
    const piece = this.bytes.read(start, this.from - start + keep);
    this.buffer = piece.length === this.from - start + keep && piece.subarray(this.from - start).equals(this.buffer.subarray(0, keep))
      ? piece
      : Buffer.concat([piece.subarray(0, this.from - start), this.buffer.subarray(0, keep)]);
    this.from = start;
  }
}

/**
 * A unit written as one (appendBatch) whose last records are missing: it is dropped whole, as a
 * cut-off end. One the commit mark counts was committed and lost (a power loss kept the mark
 * without it): refused like a lost record, unless the caller accepts the loss.
 */
function cutOffUnit(records: StoredRecord[], mark: CommitMark, length: number, acceptLostRecord: boolean, location: string, bytes: JournalBytes): { first: number; cutEnd: CutEnd } | null {
  let first = records.length - 1;
  if (first < 1 || !((records[first]!.record.more ?? 0) > 0)) return null;
  while (first > 1 && records[first - 1]!.record.more === (records[first]!.record.more ?? 0) + 1) first -= 1;
  const offset = records[first]!.offset;
  const cut = { offset, bytes: length - offset };
  if (first >= mark.records) return { first, cutEnd: { ...cut, lostCommittedRecord: null } };
  if (!acceptLostRecord) {
    const what = recordKindOf(bytes.read(cut.offset, Math.min(cut.bytes, 4096)));
    throw new StoreLostRecordError(location, first + 3, cut.offset, first, what, cut.bytes);
  }
  return { first, cutEnd: { ...cut, lostCommittedRecord: first } };
}

/** The header and the commit mark: a frame that does not parse there is damage at the start. */
function startFrame<T>(location: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof FrameError) throw new StoreCorruptError(location, error.line, error.offset, error.problem, 'start');
    throw error;
  }
}

/** The records' frames; a line that is not one is refused, said as the last line or one inside. */
function framesOrDamage(location: string, bytes: JournalBytes, start: number, length: number, pieceBytes: number): FramedJournal {
  try {
    return parseFramesInPieces(bytes, start, length, pieceBytes);
  } catch (error) {
    if (!(error instanceof FrameError)) throw error;
    const damage: JournalDamage = isLastLine(bytes, error.offset, length, pieceBytes) ? 'last' : 'inside';
    throw new StoreCorruptError(location, error.line, error.offset, error.problem, damage);
  }
}

/** Whether the line at `offset` is the last whole line: no newline follows the one that ends it. */
function isLastLine(bytes: JournalBytes, offset: number, length: number, pieceBytes: number): boolean {
  let newlines = 0;
  for (let pos = offset; pos < length; ) {
    const piece = bytes.read(pos, Math.min(pieceBytes, length - pos));
    if (piece.length === 0) break;
    for (let at = piece.indexOf(0x0a); at !== -1; at = piece.indexOf(0x0a, at + 1)) if (++newlines > 1) return false;
    pos += piece.length;
  }
  return true;
}

/** What a cut-off record was, if the bytes left of it still name its state and event. */
function recordKindOf(partial: Buffer): string | null {
  const found = /"state":"([A-Za-z]+)","event":"([A-Z_]+)"/.exec(partial.toString('utf8'));
  if (!found || !STATES.has(found[1] as AgentStateName) || !EVENTS.has(found[2] as RecordEvent)) return null;
  return describePoint(pointOf({ state: found[1] as AgentStateName, event: found[2] as RecordEvent }));
}

function firstNewline(bytes: JournalBytes, pieceBytes: number): number {
  for (let size = pieceBytes; ; size *= 2) {
    const head = bytes.read(0, size);
    const end = head.indexOf(0x0a);
    if (end !== -1 || head.length < size) return end;
  }
}

/** parseFrames over bytes [start, length), a piece at a time; the same lines, cut end and offsets. */
function parseFramesInPieces(bytes: JournalBytes, start: number, length: number, pieceBytes: number): FramedJournal {
  const lines: FramedLine[] = [];
  let pos = start;
  let size = pieceBytes;
  while (pos < length) {
    const piece = bytes.read(pos, Math.min(size, length - pos));
    const last = pos + piece.length >= length || piece.length < size;
    let framed: FramedJournal;
    try {
      framed = parseFrames(piece, 0, 3 + lines.length);
    } catch (error) {
      if (error instanceof FrameError) throw new FrameError(error.line, error.offset + pos, error.problem);
      throw error;
    }
    for (const line of framed.lines) {
      line.offset += pos;
      lines.push(line);
    }
    if (last) {
      const tornTail = framed.tornTail && { offset: framed.tornTail.offset + pos, bytes: framed.tornTail.bytes };
      return { lines, tornTail, goodLength: pos + framed.goodLength };
    }
    // A piece that ends inside a line is read again from that line; one that holds no whole line, twice as large.
    if (framed.goodLength === 0) size *= 2;
    pos += framed.goodLength;
  }
  return { lines, tornTail: null, goodLength: pos };
}

export function recordProblem(document: unknown, index: number): string | null {
  if (!document || typeof document !== 'object') return 'the line is not a record';
  const record = document as Partial<JournalRecord>;
  if (record.seq !== index) return `record number ${String(record.seq)} where ${index} was expected (a record is missing or repeated)`;
  if (!STATES.has(record.state as AgentStateName)) return `unknown state ${JSON.stringify(record.state)}`;
  if (!EVENTS.has(record.event as RecordEvent)) return `unknown event ${JSON.stringify(record.event)}`;
  if (typeof record.at !== 'number') return 'the record has no time';
  if (record.more !== undefined && !(Number.isInteger(record.more) && record.more > 0)) return `"more" is ${JSON.stringify(record.more)}, not a count of records that follow`;
  if (index === 0 && (typeof record.turn !== 'number' || typeof record.maxTurns !== 'number' || typeof record.usage !== 'object')) {
    return 'the first record lacks its turn, max turns or usage';
  }
  return null;
}
