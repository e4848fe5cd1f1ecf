/**
 * Reads a journal file's bytes into a header and records, or refuses them. The one kind of
 * damage recovered from is a cut-off end of the file: the record a crash interrupted (not yet
 * committed), or, said as such, the last committed record. Anything more, or any damage inside,
 * is refused: a half-right state is never guessed.
 */
import { AGENT_STATES, type AgentStateName } from '../../machines/agent-loop.types.ts';
import { StoreCorruptError, StoreVersionError } from './errors.ts';
import type { CommitMark, FramedJournal, FramedLine } from './framing.ts';
import { COMMIT_MARK_BYTES, FrameError, parseCommitMark, parseFrames } from './framing.ts';
import type { JournalHeader, JournalRecord, RecordEvent } from './journal-record.ts';
import { JOURNAL_FORMAT, JOURNAL_VERSION } from './journal-record.ts';
import type { StoredRecord } from './store.ts';

const STATES = new Set<AgentStateName>(AGENT_STATES);
const EVENTS = new Set<RecordEvent>(['START', 'REOPEN', 'MODEL_USAGE', 'MODEL_REPLY', 'MODEL_REPLY_INVALID', 'TOOL_RESULT', 'CLOSE_TURN']);

export interface CutEnd {
  offset: number;
  bytes: number;
  /** Set when the record lost had been committed (the file was cut after the fact, not by a crash mid-write). */
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
  readonly length: number;
  /** Up to `length` bytes from `start` (fewer at the end). */
  read(start: number, length: number): Buffer;
}

/** Pieces large enough that reading them costs nothing next to parsing them. */
export const PIECE_BYTES = 1 << 20;

export function readJournal(location: string, bytes: Buffer | JournalBytes, pieceBytes = PIECE_BYTES): ReadJournal {
  const source: JournalBytes = Buffer.isBuffer(bytes)
    ? { length: bytes.length, read: (start, length) => bytes.subarray(start, start + length) }
    : bytes;
  try {
    return readFrames(location, source, pieceBytes);
  } catch (error) {
    if (error instanceof FrameError) throw new StoreCorruptError(location, error.line, error.offset, error.problem);
    throw error;
  }
}

function readFrames(location: string, bytes: JournalBytes, pieceBytes: number): ReadJournal {
  const headerEnd = firstNewline(bytes, pieceBytes);
  if (headerEnd === -1) throw new StoreCorruptError(location, 1, 0, 'the journal has no complete header line');
  const markOffset = headerEnd + 1;
  const head = bytes.read(0, markOffset + COMMIT_MARK_BYTES);
  const [headerLine] = parseFrames(head.subarray(0, markOffset)).lines;
  const header = headerLine?.document as Partial<JournalHeader> | null;
  if (!header || typeof header !== 'object' || header.format !== JOURNAL_FORMAT) {
    throw new StoreCorruptError(location, 1, 0, `the first line is not a ${JOURNAL_FORMAT} header`);
  }
  if (header.version !== JOURNAL_VERSION) throw new StoreVersionError(location, header.version, JOURNAL_VERSION);
  if (typeof header.runId !== 'string') throw new StoreCorruptError(location, 1, 0, 'the header has no run id');

  const mark = parseCommitMark(head, markOffset, 2);
  const framed = parseFramesInPieces(bytes, markOffset + COMMIT_MARK_BYTES, pieceBytes);
  const records: StoredRecord[] = framed.lines.map((line, index) => {
    const problem = recordProblem(line.document, index);
    if (problem) throw new StoreCorruptError(location, index + 3, line.offset, problem);
    return { record: line.document as JournalRecord, bytes: line.bytes, offset: line.offset };
  });

  const complete = records.length;
  let cutEnd: CutEnd | null = null;
  if (complete < mark.records - 1) {
    throw new StoreCorruptError(
      location,
      complete + 3,
      framed.goodLength,
      `the file ends after record ${complete - 1}, but ${mark.records} records were committed (${mark.bytes} bytes): ` +
        `records ${complete} to ${mark.records - 1} are missing. A crash can only cut off the record being written, so the file was cut short afterwards`,
    );
  }
  if (complete === mark.records - 1) {
    cutEnd = { offset: framed.goodLength, bytes: bytes.length - framed.goodLength, lostCommittedRecord: complete };
  } else if (framed.tornTail) {
    cutEnd = { ...framed.tornTail, lostCommittedRecord: null };
  }
  if (complete === 0) throw new StoreCorruptError(location, 3, framed.goodLength, 'the journal holds no complete record');
  return { header: header as JournalHeader, mark, markOffset, records, cutEnd, goodLength: framed.goodLength };
}

function firstNewline(bytes: JournalBytes, pieceBytes: number): number {
  for (let size = pieceBytes; ; size *= 2) {
    const head = bytes.read(0, size);
    const end = head.indexOf(0x0a);
    if (end !== -1 || head.length >= bytes.length) return end;
  }
}

/** parseFrames over the whole journal, a piece at a time; the same lines, cut end and offsets. */
function parseFramesInPieces(bytes: JournalBytes, start: number, pieceBytes: number): FramedJournal {
  const lines: FramedLine[] = [];
  let pos = start;
  let size = pieceBytes;
  while (pos < bytes.length) {
    const piece = bytes.read(pos, size);
    const last = pos + piece.length >= bytes.length || piece.length < size;
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
  if (index === 0 && (typeof record.turn !== 'number' || typeof record.maxTurns !== 'number' || typeof record.usage !== 'object')) {
    return 'the first record lacks its turn, max turns or usage';
  }
  return null;
}
