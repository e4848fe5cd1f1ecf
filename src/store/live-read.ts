/**
 * A read that takes no lock (status, history, viz) may meet the run's writer mid-write. The
 * reader takes the commit mark first and then only what it counts, so a consistent prefix is
 * the rule; what is left is a write caught half-copied (the mark rewritten in place while it is
 * read, which fails its checksum). Damage met while the file changed under the reader may be a
 * write in progress and is read again; damage met while nothing changed is real.
 */
import { StoreCorruptError } from './errors.ts';

const ATTEMPTS = 5;
/** Long enough for a write in progress to finish; short next to a command's start-up. */
const SETTLE_MS = 10;

/**
 * `read` once, or again while the journal is being written; `snapshot` is whatever shows a
 * change (the file's size and time, the bytes of its header and commit mark).
 */
export async function readWhileWritten<T>(read: () => T, snapshot: () => Buffer): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const before = snapshot();
    try {
      return read();
    } catch (error) {
      // Unchanged since before the read: nothing was writing, so the damage is real (and said at once).
      if (!(error instanceof StoreCorruptError) || attempt === ATTEMPTS || snapshot().equals(before)) throw error;
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    }
  }
}
