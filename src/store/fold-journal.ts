/** Rebuilds the durable view of a run from its loaded journal. */
import { StoreCorruptError } from './errors.ts';
import type { DurableView } from './journal-codec.ts';
import { applyRecord, JournalDecodeError } from './journal-codec.ts';
import type { LoadedRun, StoredRecord } from './store.ts';

export function foldJournal(location: string, loaded: LoadedRun, visit?: (view: DurableView, stored: StoredRecord) => void): DurableView {
  let view: DurableView | null = null;
  let previous: StoredRecord | null = null;
  for (const stored of loaded.records) {
    if (previous) checkSnapshotLink(location, previous, stored);
    previous = stored;
    try {
      view = applyRecord(view, stored.record);
    } catch (error) {
      if (error instanceof JournalDecodeError) {
        throw new StoreCorruptError(location, stored.record.seq + 2, stored.offset, error.problem);
      }
      // A record whose values have a shape no check above foresaw is refused like any other
      // damage, never reported as a bug halfway through a resume.
      if (error instanceof TypeError) {
        throw new StoreCorruptError(location, stored.record.seq + 2, stored.offset, `record ${stored.record.seq} holds values this version cannot read (${error.message})`);
      }
      throw error;
    }
    visit?.(view, stored);
  }
  if (!view) throw new StoreCorruptError(location, 2, 0, 'the journal holds no record');
  return view;
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
