/** Rebuilds the durable view of a run from its loaded journal. */
import { StoreCorruptError } from '../errors.ts';
import type { DurableView } from './journal-codec.ts';
import { applyRecord, JournalDecodeError } from './journal-codec.ts';
import type { LoadedRun, StoredRecord } from '../store.ts';

export function foldJournal(location: string, loaded: LoadedRun, visit?: (view: DurableView, stored: StoredRecord) => void): DurableView {
  const view = visit ? foldVisiting(location, loaded.records, visit) : foldOnly(location, loaded.records);
  if (!view) throw new StoreCorruptError(location, 2, 0, 'the journal holds no record');
  return view;
}

/** Every record folded, the view shown to `visit` after each (status, history, fork). */
function foldVisiting(location: string, records: readonly StoredRecord[], visit: (view: DurableView, stored: StoredRecord) => void): DurableView | null {
  let view: DurableView | null = null;
  let previous: StoredRecord | null = null;
  for (const stored of records) {
    if (previous) checkSnapshotLink(location, previous, stored);
    previous = stored;
    try {
      view = applyRecord(view, stored.record);
    } catch (error) {
      throw refusalOf(location, stored, error);
    }
    visit(view, stored);
  }
  return view;
}

/**
 * The same fold with no one watching (a resume): one guard around the loop instead of one per
 * record. checkSnapshotLink refuses with a StoreCorruptError, which refusalOf passes on as it is.
 */
function foldOnly(location: string, records: readonly StoredRecord[]): DurableView | null {
  let view: DurableView | null = null;
  let index = 0;
  try {
    for (; index < records.length; index++) {
      if (index > 0) checkSnapshotLink(location, records[index - 1]!, records[index]!);
      view = applyRecord(view, records[index]!.record);
    }
  } catch (error) {
    throw refusalOf(location, records[index]!, error);
  }
  return view;
}

/** A record the fold cannot take is refused like any other damage, never reported as a bug halfway through a resume. */
function refusalOf(location: string, stored: StoredRecord, error: unknown): unknown {
  if (error instanceof JournalDecodeError) return new StoreCorruptError(location, stored.record.seq + 2, stored.offset, error.problem);
  // Values of a shape no check foresaw.
  if (error instanceof TypeError) {
    return new StoreCorruptError(location, stored.record.seq + 2, stored.offset, `record ${stored.record.seq} holds values this version cannot read (${error.message})`);
  }
  return error;
}

/**
 * A snapshot names the record it follows (number and checksum): one that does not match is not
 * the state those records made, and is refused rather than trusted. (The first record of a load
 * that starts at a snapshot was checked by the store, which read the line before it.)
 */
export function checkSnapshotLink(location: string, previous: StoredRecord, stored: StoredRecord): void {
  const after = stored.record.snapshot?.after;
  if (!after || previous.crc === undefined) return;
  if (after.seq === previous.record.seq && after.crc === previous.crc) return;
  throw new StoreCorruptError(
    location,
    stored.record.seq + 2,
    stored.offset,
    `snapshot record ${stored.record.seq} says it follows record ${String(after?.seq)} with checksum ${String(after?.crc)}, ` +
      `but record ${previous.record.seq} has checksum ${previous.crc}: the snapshot does not belong to this journal`,
  );
}
