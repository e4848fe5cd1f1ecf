/**
 * The journal's bytes: one JSON document per line, each prefixed with its CRC-32 so a damaged
 * line is told apart from a good one. A crash while appending leaves at most one line without
 * its trailing newline: that torn tail is the only damage a kill can cause, and the only
 * damage that is recovered from rather than refused.
 */
import { crc32 } from 'node:zlib';
import { DurableAgentError, type ErrorKind } from '../../util/durable-agent-error.ts';

const NEWLINE = 0x0a;
const CRC_HEX = 8;
/** What a line holds before its JSON and a space: its checksum, in this many hex digits. */
export const CHECKSUM_HEX_DIGITS = CRC_HEX;

/** A record holds a value JSON cannot represent: nothing of it was written. */
export class RecordEncodeError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'RecordEncodeError';
  constructor(readonly problem: string) {
    super(`A journal record could not be encoded as JSON (${problem}); nothing of it was written.`);
  }
}

/** The JSON text of a record, or RecordEncodeError (never another exception, never undefined). */
export function documentJson(document: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(document);
  } catch (error) {
    throw new RecordEncodeError(error instanceof Error ? error.message.replace(/\s+/g, ' ') : 'JSON.stringify failed');
  }
  if (json === undefined) throw new RecordEncodeError('the document has no JSON form');
  return json;
}

/** The checksum a line carries for this JSON text: 8 lowercase hex digits of its CRC-32. */
export function checksumOf(json: string | Buffer): string {
  return crc32(json).toString(16).padStart(CRC_HEX, '0');
}

/** The JSON is encoded straight into the line (not into a buffer of its own, then copied). */
export function frameLine(document: unknown): Buffer {
  const json = documentJson(document);
  const length = Buffer.byteLength(json, 'utf8');
  const line = Buffer.allocUnsafe(CRC_HEX + 1 + length + 1);
  line.write(json, CRC_HEX + 1, length, 'utf8');
  line.write(checksumOf(line.subarray(CRC_HEX + 1, CRC_HEX + 1 + length)), 0, 'latin1');
  line[CRC_HEX] = 0x20;
  line[line.length - 1] = NEWLINE;
  return line;
}

/** The lowercase hex digits, as bytes: a checksum is written straight into its line. */
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');

/** Writes `crc` as 8 lowercase hex digits at `at`: the bytes of checksumOf's text. */
function writeCrcHex(buffer: Buffer, at: number, crc: number): void {
  let rest = crc;
  for (let digit = CRC_HEX - 1; digit >= 0; digit--) {
    buffer[at + digit] = HEX_DIGITS[rest & 15]!;
    rest >>>= 4;
  }
}

/** A framer keeps a buffer this large between appends; a larger record's is let go once written. */
const FRAMER_KEEPS_BYTES = 64 * 1024;

/**
 * Frames lines one after another into one reused buffer: the same bytes as frameLine, without
 * a buffer per line, a copy to join a unit's lines, or a text for each checksum. What bytes()
 * returns is overwritten by the next frame(): a store writes it before it frames again.
 */
export class LineFramer {
  // Taken at the first frame: a store opened only to be read (a status, a check, a viewer) writes nothing.
  private scratch = Buffer.alloc(0);
  private end = 0;

  /** Starts a new run of lines (what bytes() returned before is given up). */
  reset(): void {
    if (this.scratch.length > FRAMER_KEEPS_BYTES) this.scratch = Buffer.allocUnsafe(FRAMER_KEEPS_BYTES);
    this.end = 0;
  }

  /** Frames the document after the lines framed since reset(); the line's length in bytes. */
  frame(document: unknown): number {
    const json = documentJson(document);
    const start = this.end;
    const body = start + CRC_HEX + 1;
    // A UTF-16 unit takes at most 3 UTF-8 bytes; only a text that may not fit is measured exactly.
    if (body + json.length * 3 + 1 > this.scratch.length) {
      const need = body + Buffer.byteLength(json, 'utf8') + 1;
      if (need > this.scratch.length) this.grow(need);
    }
    const length = this.scratch.write(json, body, 'utf8');
    const newline = body + length;
    writeCrcHex(this.scratch, start, crc32(this.scratch.subarray(body, newline)));
    this.scratch[start + CRC_HEX] = 0x20;
    this.scratch[newline] = NEWLINE;
    this.end = newline + 1;
    return this.end - start;
  }

  /** The lines framed since reset(), back to back. */
  bytes(): Buffer {
    return this.scratch.subarray(0, this.end);
  }

  /** Their length: they are the first `length` bytes of `buffer` (a store writes them from there, without a view). */
  get length(): number {
    return this.end;
  }

  /** The buffer the lines are framed in (only its first `length` bytes are theirs). */
  get buffer(): Buffer {
    return this.scratch;
  }

  private grow(need: number): void {
    const bigger = Buffer.allocUnsafe(Math.max(need, this.scratch.length * 2, FRAMER_KEEPS_BYTES));
    this.scratch.copy(bigger, 0, 0, this.end);
    this.scratch = bigger;
  }
}

export interface FramedLine {
  document: unknown;
  offset: number;
  bytes: number;
  /** The line's checksum (checksumOf its JSON). */
  crc: string;
}

export interface TornTail {
  offset: number;
  bytes: number;
}

export interface FramedJournal {
  lines: FramedLine[];
  /** Bytes after the last complete line (a write cut short by a crash), if any. */
  tornTail: TornTail | null;
  /** Length of the intact prefix: where the next append must start. */
  goodLength: number;
}

export class FrameError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'FrameError';
  constructor(
    readonly line: number,
    readonly offset: number,
    readonly problem: string,
  ) {
    super(`line ${line} (byte ${offset}): ${problem}`);
  }
}

export function parseFrames(buffer: Buffer, start = 0, firstLineNo = 1): FramedJournal {
  const lines: FramedLine[] = [];
  let pos = start;
  while (pos < buffer.length) {
    const end = buffer.indexOf(NEWLINE, pos);
    if (end === -1) return { lines, tornTail: { offset: pos, bytes: buffer.length - pos }, goodLength: pos };
    const document = parseLine(buffer, pos, end, firstLineNo + lines.length);
    lines.push({ document, offset: pos, bytes: end + 1 - pos, crc: buffer.toString('latin1', pos, pos + CRC_HEX) });
    pos = end + 1;
  }
  return { lines, tornTail: null, goodLength: pos };
}

/** The document of the line [start, end) (end: its newline), checked against its checksum. */
export function parseLine(buffer: Buffer, start: number, end: number, lineNo: number): unknown {
  if (end - start < CRC_HEX + 2 || buffer[start + CRC_HEX] !== 0x20) {
    throw new FrameError(lineNo, start, 'not a journal line (expected a checksum, a space and a JSON document)');
  }
  const expected = Number.parseInt(buffer.toString('latin1', start, start + CRC_HEX), 16);
  const body = buffer.subarray(start + CRC_HEX + 1, end);
  if (Number.isNaN(expected) || crc32(body) !== expected) {
    throw new FrameError(lineNo, start, 'checksum mismatch (the line was changed after it was written)');
  }
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new FrameError(lineNo, start, `checksum matches but the JSON does not parse (${(error as Error).message})`);
  }
}

/**
 * The commit mark: a fixed-width line right after the header, rewritten in place by every
 * append (before the same fdatasync). It says how many records were committed, so a journal
 * cut short by something other than a crash (records lost from its end) is told apart from a
 * torn last write, which only a crash mid-append leaves.
 */
export interface CommitMark {
  records: number;
  bytes: number;
}

const MARK_PREFIX = '@commit ';
export const COMMIT_MARK_BYTES = MARK_PREFIX.length + 10 + 1 + 12 + 1 + CRC_HEX + 1;

export function frameCommitMark(mark: CommitMark): Buffer {
  const body = `${String(mark.records).padStart(10, '0')} ${String(mark.bytes).padStart(12, '0')}`;
  const text = `${MARK_PREFIX}${body} ${crc32(body).toString(16).padStart(CRC_HEX, '0')}\n`;
  return Buffer.from(text, 'latin1');
}

/** The largest counts a mark's fixed-width fields hold. */
const MARK_MAX_RECORDS = 9_999_999_999;
const MARK_MAX_BYTES = 999_999_999_999;

/**
 * frameCommitMark's bytes, written into one reused buffer (a store rewrites its mark at every
 * synced append): what it returns is overwritten by the next call.
 */
export class CommitMarkFramer {
  private readonly buffer = Buffer.alloc(COMMIT_MARK_BYTES);

  constructor() {
    this.buffer.write(MARK_PREFIX, 0, 'latin1');
    this.buffer[MARK_PREFIX.length + 10] = 0x20;
    this.buffer[MARK_PREFIX.length + 10 + 1 + 12] = 0x20;
    this.buffer[COMMIT_MARK_BYTES - 1] = NEWLINE;
  }

  frame(mark: CommitMark): Buffer {
    // Counts too wide for the fields (never met in practice) take frameCommitMark's own path.
    if (!fitsMark(mark.records, MARK_MAX_RECORDS) || !fitsMark(mark.bytes, MARK_MAX_BYTES)) return frameCommitMark(mark);
    const records = MARK_PREFIX.length;
    const bytes = records + 10 + 1;
    writeDecimal(this.buffer, records, 10, mark.records);
    writeDecimal(this.buffer, bytes, 12, mark.bytes);
    writeCrcHex(this.buffer, bytes + 12 + 1, crc32(this.buffer.subarray(records, bytes + 12)));
    return this.buffer;
  }
}

function fitsMark(value: number, max: number): boolean {
  return Number.isInteger(value) && value >= 0 && value <= max;
}

/** `value` as `width` decimal digits, zero-padded, at `at`. */
function writeDecimal(buffer: Buffer, at: number, width: number, value: number): void {
  let rest = value;
  for (let digit = width - 1; digit >= 0; digit--) {
    buffer[at + digit] = 0x30 + (rest % 10);
    rest = Math.floor(rest / 10);
  }
}

export function parseCommitMark(buffer: Buffer, offset: number, lineNo: number): CommitMark {
  const text = buffer.toString('latin1', offset, offset + COMMIT_MARK_BYTES);
  const match = /^@commit (\d{10}) (\d{12}) ([0-9a-f]{8})\n$/.exec(text);
  if (!match) throw new FrameError(lineNo, offset, 'the commit mark is missing or malformed');
  const [, records, bytes, crc] = match as unknown as [string, string, string, string];
  if (crc32(`${records} ${bytes}`) !== Number.parseInt(crc, 16)) {
    throw new FrameError(lineNo, offset, 'the commit mark fails its checksum');
  }
  return { records: Number(records), bytes: Number(bytes) };
}

