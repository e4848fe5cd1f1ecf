/**
 * Where a store seals and opens a run's content: the run key of the run it holds, kept wrapped
 * where the store keeps it (RunKeyPlace: a file beside the journal, a column of the run's row in
 * PostgreSQL), and the two seams of the store's paths. On write, records are sealed after their
 * payloads went to blobs and before they are framed, so a line's checksum is that of the sealed
 * bytes; on read, a parsed record is opened before its payloads come back from blobs.
 *
 * A run started with keys is sealed; a run started without them stays plain (keys given later
 * change nothing of it). A sealed run loaded without its key still reads where runs are found and
 * operated (state, turn, tools, usage): its content stays sealed strings, never a guess. A writer
 * (a resume) is refused then, naming the master key it needs.
 */
import { BlobSealer } from '../seal/blob-seal.ts';
import { createRunKey, type RunKey, type WrappedRunKey, unwrapRunKey } from '../seal/envelope.ts';
import type { KeysGiven, MasterKeys } from '../seal/keys.ts';
import { openRecordContent, sealRecordContent } from '../seal/record-content.ts';
import { KeyNotGivenError } from '../seal/seal-errors.ts';
import { openerFor, sealerFor, type ValueOpener, type ValueSealer } from '../seal/value-codec.ts';
import type { RunKeyMissingError } from './errors.ts';
import { JOURNAL_VERSION_SEALED, type JournalHeader, type JournalRecord } from './journal/journal-record.ts';
import type { BlobSealing } from './blobs.ts';
import type { StoredRecord } from './store.ts';

/**
 * Where a store keeps the wrapped run key of the run it holds: a file beside the journal
 * (run-key-file.ts) or a column of the run's row (pg/pg-run-keys.ts).
 */
export interface RunKeyPlace {
  /** The wrap kept for the run, or null when there is none (a plain run, or a shredded one). */
  read(runId: string): Promise<WrappedRunKey | null>;
  /** Keeps a new run's wrap, durably, before the run's first record is written. */
  write(runId: string, wrapped: WrappedRunKey): Promise<void>;
  /** The refusal for a sealed run whose wrap is not there (shredded). */
  missing(runId: string, keyId: string): RunKeyMissingError;
  /**
   * Whether a wrap kept there before the run's first record is the run's: a fleet run submitted
   * sealed has its run key from the submit (its task is sealed with it). A folder's is not
   * read then: a new journal always gets a new key.
   */
  readonly keptBeforeCreate: boolean;
}

export class RunSealing {
  #given: KeysGiven | undefined;
  #keys: Promise<MasterKeys | null> | null = null;
  /** The run key of the run last created or loaded, when it is sealed and its key was opened. */
  #runKey: { runId: string; key: RunKey; sealer: ValueSealer; opener: ValueOpener; blobs: BlobSealer | null } | null = null;
  /** The run key kept before the run's first record, opened for what is written for it meanwhile (valuesBeforeCreate). */
  #keptKey: { runId: string; key: RunKey } | null = null;
  /** Whether the run last created or loaded is sealed. */
  #sealed = false;
  /** Why the content of the run last loaded cannot be opened, when it cannot. */
  #refusal: KeyNotGivenError | RunKeyMissingError | null = null;
  /** The header of the run last created or loaded (null before either, and once it is archived). */
  #header: JournalHeader | null = null;

  constructor(
    private readonly place: RunKeyPlace,
    given: KeysGiven | undefined,
  ) {
    this.#given = given;
  }

  giveKeys(given: KeysGiven): void {
    this.#given = given;
    this.#keys = null;
    this.#keptKey = null;
    // A sealed run read before without its key is read again (with these) before an inbox seals for it.
    if (this.#sealed && this.#runKey === null) this.#header = null;
  }

  /** The keys as given (absent: none). */
  given(): KeysGiven | undefined {
    return this.#given;
  }

  /** The master keys given, read once (null: none). */
  keys(): Promise<MasterKeys | null> {
    const given = this.#given;
    this.#keys ??= given === undefined ? Promise.resolve(null) : typeof given === 'function' ? given() : Promise.resolve(given);
    return this.#keys;
  }

  /**
   * A new run: with keys, its run key is made and kept (before the run's first record exists),
   * and the header names it. A fork of a sealed run without keys is refused: it would write the
   * parent's content in plain. Where a key kept before the create is the run's (keptBeforeCreate),
   * that key seals the run, opened with the keys given.
   */
  async prepareCreate(header: JournalHeader): Promise<JournalHeader> {
    const { sealed: parentKey, ...plain } = header;
    const keys = await this.keys();
    // Without keys no kept key is looked for (a plain run's create costs no read): a run whose
    // task was submitted sealed is refused before, when its task cannot be opened.
    const kept = keys !== null && this.place.keptBeforeCreate ? await this.place.read(header.runId) : null;
    if (kept !== null && keys !== null) {
      this.remember(header.runId, await unwrapRunKey(kept, keys, header.runId));
      return this.created({ ...plain, version: Math.max(header.version, JOURNAL_VERSION_SEALED), sealed: kept.key });
    }
    if (keys === null) {
      if (parentKey !== undefined) throw new KeyNotGivenError(parentKey, 'run key', header.runId);
      this.#sealed = false;
      this.#runKey = null;
      return this.created(plain);
    }
    const { runKey, wrapped } = await createRunKey(keys);
    await this.place.write(header.runId, wrapped);
    this.remember(header.runId, runKey);
    return this.created({ ...plain, version: Math.max(header.version, JOURNAL_VERSION_SEALED), sealed: runKey.id });
  }

  /**
   * A new run whose store keeps its run key in the same step as its records (a fleet fork's one
   * transaction), so nothing is written here: with keys, a new run key and its wrap for the caller
   * to keep, and the header naming it; without them a plain run, or the refusal of a sealed
   * parent's child (KeyNotGivenError naming the key: its content would be written in plain).
   */
  async prepareCreateKeptWith(header: JournalHeader): Promise<{ header: JournalHeader; wrapped: WrappedRunKey | null; runKey: RunKey | null }> {
    const { sealed: parentKey, ...plain } = header;
    const keys = await this.keys();
    if (keys === null) {
      if (parentKey !== undefined) throw new KeyNotGivenError(parentKey, 'run key', header.runId);
      this.#sealed = false;
      this.#runKey = null;
      return { header: this.created(plain), wrapped: null, runKey: null };
    }
    const { runKey, wrapped } = await createRunKey(keys);
    this.remember(header.runId, runKey);
    return { header: this.created({ ...plain, version: Math.max(header.version, JOURNAL_VERSION_SEALED), sealed: runKey.id }), wrapped, runKey };
  }

  private created(header: JournalHeader): JournalHeader {
    this.#header = header;
    return header;
  }

  /**
   * A loaded run: a sealed one's key is opened with the keys given. Without them it stays sealed
   * for a reader and is refused to a writer (`forWriting`), which would append plain records.
   * `keptWrap`: the wrap as the store already read it with the run (a fleet run's row brings
   * it), so it costs no read of its own; absent, it is read from where the store keeps it.
   */
  async prepareLoad(header: JournalHeader, forWriting: boolean, keptWrap?: () => WrappedRunKey | null): Promise<void> {
    this.#header = header;
    this.#sealed = header.sealed !== undefined;
    this.#refusal = null;
    if (!this.#sealed) {
      this.#runKey = null;
      return;
    }
    if (this.#runKey?.runId === header.runId && this.#runKey.key.id === header.sealed) return;
    this.#runKey = null;
    const wrapped = keptWrap ? keptWrap() : await this.place.read(header.runId);
    if (wrapped === null) {
      this.#refusal = this.place.missing(header.runId, header.sealed!);
      if (forWriting) throw this.#refusal;
      return;
    }
    const keys = await this.keys();
    if (keys === null) {
      this.#refusal = new KeyNotGivenError(wrapped.master, 'master key', header.runId);
      if (forWriting) throw this.#refusal;
      return;
    }
    try {
      this.remember(header.runId, await unwrapRunKey(wrapped, keys, header.runId));
    } catch (error) {
      // A reader of what finds and operates runs (list, status) needs no key: it reads the run sealed.
      if (forWriting || !(error instanceof KeyNotGivenError)) throw error;
      this.#refusal = error;
    }
  }

  /**
   * Why the content of the run just loaded cannot be shown (null when it can): the master key it needs was not
   * given (KeyNotGivenError naming it), or its run key was deleted (RunKeyMissingError).
   */
  contentRefusal(): KeyNotGivenError | RunKeyMissingError | null {
    if (!this.#sealed || this.#runKey !== null) return null;
    return this.#refusal;
  }

  /** Whether the run at hand is sealed, and whether its run key is open here. */
  state(): { sealed: boolean; keyHeld: boolean } {
    return { sealed: this.#sealed, keyHeld: this.#runKey !== null };
  }

  /** Whether a run was created or loaded here (its header is known): the inboxes ask before they seal. */
  knowsRun(): boolean {
    return this.#header !== null;
  }

  /**
   * What seals content written for the run at hand from outside its journal (an inbox entry):
   * null for a plain run; for a sealed one whose key is not at hand, the refusal naming the key
   * (KeyNotGivenError) or saying it was shredded (RunKeyMissingError): never plain text.
   */
  contentSealer(): ValueSealer | null {
    if (!this.#sealed) return null;
    if (this.#runKey) return this.#runKey.sealer;
    throw this.contentRefusal() ?? new Error('A sealed run without its run key had no refusal.');
  }

  /** What opens such content: null for a plain run, and for a sealed one read without its key (its values stay sealed). */
  contentOpener(): ValueOpener | null {
    return this.#sealed ? (this.#runKey?.opener ?? null) : null;
  }

  private remember(runId: string, key: RunKey): void {
    this.#sealed = true;
    this.#refusal = null;
    // The blob sealer (a key derived for names) is made when a blob is first written or read.
    this.#runKey = { runId, key, sealer: sealerFor(key, runId), opener: openerFor(key, runId), blobs: null };
  }

  /** How the run at hand keeps its blobs: plain, or sealed with its run key (none when the key was not given). */
  blobSealing(): BlobSealing {
    if (!this.#sealed) return { sealed: false };
    const open = this.#runKey;
    if (open === null) return { sealed: true, sealer: null };
    open.blobs ??= new BlobSealer(open.key, open.runId);
    return { sealed: true, sealer: open.blobs };
  }

  /** The records as written: sealed when the run is. */
  sealRecords(records: readonly JournalRecord[]): readonly JournalRecord[] {
    if (!this.#sealed) return records;
    const sealer = this.#runKey?.sealer;
    // prepareLoad refuses a writer without the key: this is a bug, never a plain record in a sealed journal.
    if (!sealer) throw new Error('A sealed run was written to without its run key.');
    return records.map((record) => sealRecordContent(record, sealer));
  }

  /** The records as read, opened when their key is at hand (else left sealed, for readers that need no content). */
  openRecords(records: readonly StoredRecord[]): StoredRecord[] {
    const opener = this.#runKey?.opener;
    if (!opener) return records as StoredRecord[];
    return records.map((stored) => ({ ...stored, record: openRecordContent(stored.record, opener) }));
  }

  /**
   * Seals and opens what the run keeps outside its records (a fleet run's submitted task, its
   * inbox's decisions), bound to `boundTo` as their run (a fleet run's id): null for a plain run
   * or one not loaded yet. A sealed run loaded without its key is refused, never written plain.
   */
  valuesFor(boundTo: string): { sealer: ValueSealer; opener: ValueOpener } | null {
    if (!this.#sealed) return null;
    const key = this.#runKey?.key;
    if (!key) throw this.#refusal ?? new Error('A sealed run was written to without its run key.');
    return { sealer: sealerFor(key, boundTo), opener: openerFor(key, boundTo) };
  }

  /**
   * What seals and opens, bound to `boundTo`, what is written for a run before its first record
   * (a signal, a request sent to a fleet run still queued): the run key kept before the create
   * (keptBeforeCreate: a fleet run submitted sealed has its key from the submit, and the run is
   * sealed with that key when it starts), opened with the keys given. Null where none is kept
   * (the run was submitted plain). Without the master key it is wrapped under, a KeyNotGivenError
   * naming it: never plain text for a run that is sealed.
   */
  async valuesBeforeCreate(boundTo: string): Promise<{ sealer: ValueSealer; opener: ValueOpener } | null> {
    if (!this.place.keptBeforeCreate) return null;
    if (this.#keptKey?.runId !== boundTo) {
      const wrapped = await this.place.read(boundTo);
      if (wrapped === null) return null;
      const keys = await this.keys();
      if (keys === null) throw new KeyNotGivenError(wrapped.master, 'master key', boundTo);
      this.#keptKey = { runId: boundTo, key: await unwrapRunKey(wrapped, keys, boundTo) };
    }
    const { key } = this.#keptKey;
    return { sealer: sealerFor(key, boundTo), opener: openerFor(key, boundTo) };
  }

  /**
   * What seals and opens, bound to `boundTo`, with the wrap read from the run's row under its lock
   * (a run sealed in after it was read plain: keys rotate --seal-plain), opened with the keys
   * given; without the master key it is wrapped under, a KeyNotGivenError naming it.
   */
  async valuesWithWrap(boundTo: string, wrapped: WrappedRunKey): Promise<{ sealer: ValueSealer; opener: ValueOpener }> {
    const keys = await this.keys();
    if (keys === null) throw new KeyNotGivenError(wrapped.master, 'master key', boundTo);
    const key = await unwrapRunKey(wrapped, keys, boundTo);
    return { sealer: sealerFor(key, boundTo), opener: openerFor(key, boundTo) };
  }

  /** The run's content is no longer this one's to write (its journal archived, the next run gets its own key). */
  forget(): void {
    this.#runKey = null;
    this.#sealed = false;
    this.#refusal = null;
    this.#header = null;
  }
}
