/**
 * The journal's bytes: one JSON document per line, each prefixed with its CRC-32 so a damaged
 * line is told apart from a good one. A crash while appending leaves at most one line without
 * its trailing newline: that torn tail is the only damage a kill can cause, and the only
 * damage that is recovered from rather than refused.
 */
import { crc32 } from 'node:zlib';

const NEWLINE = 0x0a;
const CRC_HEX = 8;

/** A record holds a value JSON cannot represent: nothing of it was written. */
export class RecordEncodeError extends Error {
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

export class FrameError extends Error {
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

