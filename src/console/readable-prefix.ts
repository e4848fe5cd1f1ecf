/**
 * What can still be read of a damaged journal: its header and the records before the damage,
 * each checked as a load checks it. The store refuses a damaged journal whole (a resume must
 * never guess); a person looking at it wants to see how far it got, so the console shows this
 * prefix read-only, with the damage said beside it.
 */
import fs from 'node:fs';
import type { StoreCorruptError } from '../store/errors.ts';
import { COMMIT_MARK_BYTES, FrameError, parseLine } from '../store/journal/framing.ts';
import { recordProblem } from '../store/journal/journal-reader.ts';
import type { JournalHeader, JournalRecord } from '../store/journal/journal-record.ts';
import { JOURNAL_FORMAT } from '../store/journal/journal-record.ts';
import type { LoadedRun, StoredRecord } from '../store/store.ts';

const NEWLINE = 0x0a;
const CRC_HEX = 8;

/** The readable records of `file` before the damage `error` describes; null when not even the header and one record are. */
export function readablePrefix(file: string, error: StoreCorruptError): LoadedRun | null {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch {
    return null;
  }
  const headerEnd = bytes.indexOf(NEWLINE);
  if (headerEnd === -1) return null;
  const header = lineDocument(bytes, 0, headerEnd) as Partial<JournalHeader> | null;
  if (!header || header.format !== JOURNAL_FORMAT || typeof header.runId !== 'string') return null;
  const end = Math.min(bytes.length, error.offset > headerEnd ? error.offset : bytes.length);
  const records: StoredRecord[] = [];
  for (let pos = headerEnd + 1 + COMMIT_MARK_BYTES; pos < end; ) {
    const lineEnd = bytes.indexOf(NEWLINE, pos);
    if (lineEnd === -1 || lineEnd >= end) break;
    const document = lineDocument(bytes, pos, lineEnd);
    if (document === null || recordProblem(document, records.length) !== null) break;
    records.push({ record: document as JournalRecord, bytes: lineEnd + 1 - pos, offset: pos, crc: bytes.toString('latin1', pos, pos + CRC_HEX) });
    pos = lineEnd + 1;
  }
  if (records.length === 0) return null;
  const last = records[records.length - 1]!;
  return { header: header as JournalHeader, records, tornTail: null, totalBytes: last.offset + last.bytes };
}

function lineDocument(bytes: Buffer, start: number, end: number): unknown {
  try {
    return parseLine(bytes, start, end, 0);
  } catch (error) {
    if (error instanceof FrameError) return null;
    throw error;
  }
}
