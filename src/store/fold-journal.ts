/** Rebuilds the durable view of a run from its loaded journal. */
import { StoreCorruptError } from './errors.ts';
import type { DurableView } from './journal-codec.ts';
import { applyRecord, JournalDecodeError } from './journal-codec.ts';
import type { LoadedRun, StoredRecord } from './store.ts';

export function foldJournal(location: string, loaded: LoadedRun, visit?: (view: DurableView, stored: StoredRecord) => void): DurableView {
  let view: DurableView | null = null;
  for (const stored of loaded.records) {
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
