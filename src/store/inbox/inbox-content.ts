/**
 * The content of a sealed run's inbox entries: what a person or a program writes for the run from
 * another process (a decision's reason, note, answer and edited input; a signal's data; a cancel's
 * reason) waits in the inbox until the run's writer records it, and is sealed there as the journal
 * is: with the run key, bound to the run and to the entry's place (its call, its signal and time,
 * its kind and time), the entry marked `sealed: <run key id>`. Who reads it (the run's writer)
 * holds the key; who reads it without the key (status, pending) sees the sealed strings, never a
 * guess.
 *
 * A writer without the key is refused (KeyNotGivenError naming the master key it needs) rather
 * than write plain text into a sealed run; an entry that holds no content (an approval without a
 * note, a cancel without a reason, a signal without data) has nothing to seal and is written all
 * the same. An unmarked entry is read as it is: one an earlier release wrote before inboxes were
 * sealed is still taken.
 */
import type { ValueOpener, ValueSealer } from '../../seal/value-codec.ts';

/** Where an inbox gets its run's sealing: the store that keeps it says. */
export interface InboxContent {
  /**
   * For a writer, when the store knows the run already: null for a plain run, the sealer for a
   * sealed one; throws when the run is sealed and its key is not at hand. Undefined when the run
   * must be read first (then `sealer`).
   */
  sealerNow(): ValueSealer | null | undefined;
  /** For a writer: null for a plain run; throws when the run is sealed and its key is not at hand. */
  sealer(): Promise<ValueSealer | null>;
  /** For a reader: null for a plain run, and for a sealed one read without its key. */
  opener(): ValueOpener | null;
}

export const PLAIN_INBOX: InboxContent = { sealerNow: () => null, sealer: async () => null, opener: () => null };

/** What an entry's envelope carries when its content is sealed: the run key's id. */
export const INBOX_SEALED_MARK = 'sealed';

/** A sealed entry as written: the entry with its content sealed, and the run key's id (null: as it is). */
export interface KeptEntry<T> {
  entry: T;
  sealed: string | null;
}

/**
 * The entry with its content fields sealed for `place`, and the mark; as it is for a plain run,
 * or when it holds no content. Done at once when the store knows the run (an inbox written by a
 * run's own process is written before the call returns, as a plain one is); a promise when the
 * run must be read first.
 */
export function sealEntry<T extends object>(entry: T, fields: readonly string[], place: string, content: InboxContent): KeptEntry<T> | Promise<KeptEntry<T>> {
  const values = entry as Record<string, unknown>;
  const present = fields.filter((field) => values[field] !== undefined && values[field] !== null);
  if (present.length === 0) return { entry, sealed: null };
  const now = content.sealerNow();
  if (now !== undefined) return sealedWith(values, present, place, now) as KeptEntry<T>;
  return content.sealer().then((sealer) => sealedWith(values, present, place, sealer) as KeptEntry<T>);
}

function sealedWith(values: Record<string, unknown>, present: readonly string[], place: string, sealer: ValueSealer | null): KeptEntry<unknown> {
  if (sealer === null) return { entry: values, sealed: null };
  const out: Record<string, unknown> = { ...values };
  for (const field of present) out[field] = sealer.seal(values[field], `${place}.${field}`);
  return { entry: out, sealed: sealer.keyId };
}

/**
 * The entry with its sealed fields opened when the key is at hand (left sealed otherwise), or why
 * it cannot be: a value that fails its check, or is sealed under another run's key, makes the
 * entry one that is not whole (a problem, as a damaged file is), never a guess.
 */
export function openEntry<T extends object>(entry: T, sealed: string | null, fields: readonly string[], place: string, content: InboxContent): T | { problem: string } {
  if (sealed === null) return entry;
  const opener = content.opener();
  if (opener === null) return entry;
  const values = entry as Record<string, unknown>;
  const out: Record<string, unknown> = { ...values };
  try {
    for (const field of fields) if (values[field] !== undefined && values[field] !== null) out[field] = opener.open(values[field], `${place}.${field}`);
  } catch (error) {
    return { problem: `its sealed content does not open (${(error as Error).message})` };
  }
  return out as T;
}

/** A writer's sealing with this sealer at hand (a plain run being sealed in: keys rotate --seal-plain). */
export function sealingWith(sealer: ValueSealer): InboxContent {
  return { sealerNow: () => sealer, sealer: async () => sealer, opener: () => null };
}
