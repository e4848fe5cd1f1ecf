/**
 * Where a file store seals and opens a run's content: the run key of the run it holds, kept
 * wrapped beside the journal (run-key-file.ts), and the two seams of the store's paths. On write,
 * records are sealed after their payloads went to blobs and before they are framed, so a line's
 * checksum is that of the sealed bytes; on read, a parsed record is opened before its payloads
 * come back from blobs.
 *
 * A run started with keys is sealed; a run started without them stays plain (keys given later
 * change nothing of it). A sealed run loaded without its key still reads where runs are found and
 * operated (state, turn, tools, usage): its content stays sealed strings, never a guess. A writer
 * (a resume) is refused then, naming the master key it needs.
 */
import { BlobSealer } from '../seal/blob-seal.ts';
import { createRunKey, type RunKey, unwrapRunKey } from '../seal/envelope.ts';
import type { KeysGiven, MasterKeys } from '../seal/keys.ts';
import { openRecordContent, sealRecordContent } from '../seal/record-content.ts';
import { KeyNotGivenError } from '../seal/seal-errors.ts';
import { openerFor, sealerFor, type ValueOpener, type ValueSealer } from '../seal/value-codec.ts';
import fs from 'node:fs';
import { fsyncDir } from '../util/durable-file.ts';
import path from 'node:path';
import { JOURNAL_VERSION_SEALED, type JournalHeader, type JournalRecord } from './journal/journal-record.ts';
import { RunKeyMissingError } from './errors.ts';
import { readRunKeyFile, runKeyPathOf, writeRunKeyFile } from './run-key-file.ts';
import type { BlobSealing } from './blobs.ts';
import type { StoredRecord } from './store.ts';

export class RunSealing {
  #given: KeysGiven | undefined;
  #keys: Promise<MasterKeys | null> | null = null;
  /** The run key of the run last created or loaded, when it is sealed and its key was opened. */
  #runKey: { runId: string; key: RunKey; sealer: ValueSealer; opener: ValueOpener; blobs: BlobSealer | null } | null = null;
  /** Whether the run last created or loaded is sealed. */
  #sealed = false;
  /** The header of the run last created or loaded (null before either, and once it is archived). */
  #header: JournalHeader | null = null;

  constructor(
    private readonly runFolder: string,
    given: KeysGiven | undefined,
  ) {
    this.#given = given;
  }

  giveKeys(given: KeysGiven): void {
    this.#given = given;
    this.#keys = null;
    // A sealed run read before without its key is read again (with these) before an inbox seals for it.
    if (this.#sealed && this.#runKey === null) this.#header = null;
  }

  private keys(): Promise<MasterKeys | null> {
    const given = this.#given;
    this.#keys ??= given === undefined ? Promise.resolve(null) : typeof given === 'function' ? given() : Promise.resolve(given);
    return this.#keys;
  }

  /**
   * A new run: with keys, its run key is made and written beside the (not yet existing) journal,
   * and the header names it. A fork of a sealed run without keys is refused: it would write the
   * parent's content in plain.
   */
  async prepareCreate(header: JournalHeader): Promise<JournalHeader> {
    const keys = await this.keys();
    const { sealed: parentKey, ...plain } = header;
    if (keys === null) {
      if (parentKey !== undefined) throw new KeyNotGivenError(parentKey, 'run key', header.runId);
      this.#sealed = false;
      this.#runKey = null;
      this.#header = plain;
      return plain;
    }
    const { runKey, wrapped } = await createRunKey(keys);
    writeRunKeyFile(this.runFolder, wrapped);
    this.remember(header.runId, runKey);
    const sealed = { ...plain, version: Math.max(header.version, JOURNAL_VERSION_SEALED), sealed: runKey.id };
    this.#header = sealed;
    return sealed;
  }

  /**
   * A loaded run: a sealed one's key is opened with the keys given. Without them it stays sealed
   * for a reader and is refused to a writer (`forWriting`), which would append plain records.
   */
  async prepareLoad(header: JournalHeader, forWriting: boolean): Promise<void> {
    this.#header = header;
    this.#sealed = header.sealed !== undefined;
    if (!this.#sealed) {
      this.#runKey = null;
      return;
    }
    if (this.#runKey?.runId === header.runId && this.#runKey.key.id === header.sealed) return;
    this.#runKey = null;
    const wrapped = readRunKeyFile(this.runFolder, header.runId);
    if (wrapped === null) {
      if (forWriting) throw new RunKeyMissingError(header.runId, header.sealed!, runKeyPathOf(this.runFolder));
      return;
    }
    const keys = await this.keys();
    if (keys === null) {
      if (forWriting) throw new KeyNotGivenError(wrapped.master, 'master key', header.runId);
      return;
    }
    try {
      this.remember(header.runId, await unwrapRunKey(wrapped, keys, header.runId));
    } catch (error) {
      // A reader of what finds and operates runs (list, status) needs no key: it reads the run sealed.
      if (forWriting || !(error instanceof KeyNotGivenError)) throw error;
    }
  }

  /**
   * Why the content of the run just loaded cannot be shown (null when it can): the master key it needs was not
   * given (KeyNotGivenError naming it), or its run key was deleted (RunKeyMissingError).
   */
  contentRefusal(header: JournalHeader): KeyNotGivenError | RunKeyMissingError | null {
    if (!this.#sealed || this.#runKey !== null) return null;
    const wrapped = readRunKeyFile(this.runFolder, header.runId);
    if (wrapped === null) return new RunKeyMissingError(header.runId, header.sealed ?? 'unknown', runKeyPathOf(this.runFolder));
    return new KeyNotGivenError(wrapped.master, 'master key', header.runId);
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
    throw this.contentRefusal(this.#header!) ?? new Error('A sealed run without its run key had no refusal.');
  }

  /** What opens such content: null for a plain run, and for a sealed one read without its key (its values stay sealed). */
  contentOpener(): ValueOpener | null {
    return this.#sealed ? (this.#runKey?.opener ?? null) : null;
  }

  private remember(runId: string, key: RunKey): void {
    this.#sealed = true;
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

  /** Moves the run key file along with an archived journal (the next run gets its own). */
  archiveKey(target: string): void {
    this.#runKey = null;
    this.#sealed = false;
    this.#header = null;
    const from = runKeyPathOf(this.runFolder);
    if (!fs.existsSync(from)) return;
    fs.renameSync(from, target);
    fsyncDir(path.dirname(target));
    fsyncDir(this.runFolder);
  }
}
