/**
 * An inbox of one-file entries, keyed: `DIR/.durable-agent/<dir>/<key>.json`. Decisions (keyed by
 * tool_use_id) and control requests (keyed by kind) are both written here by other processes
 * and read by the run's writer, so both need the same guarantees:
 * - an entry is created whole: written and fsynced under a temporary name, then linked to its
 *   name (link fails if the name exists: a second entry for a key is refused, not written over),
 *   then the directory is fsynced. A process killed at any instant leaves no entry or a whole
 *   one (and perhaps a temporary file, which no reader takes for an entry, swept once its
 *   writer is gone);
 * - an entry is removed durably (the directory fsynced): a crash after it cannot bring it back.
 * What an entry must hold, and what to say of one that does not, is the kind's business.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createFileExclusively, fsyncDir, writeFileDurably } from '../../util/durable-file.ts';
import { environmentProblem } from '../fs-problems.ts';
import { NotARegularFileError, readRegularFile } from '../../util/regular-file.ts';
import { PRIVATE_DIR, PRIVATE_FILE } from '../state-folder.ts';
import type { ValueSealer } from '../../seal/value-codec.ts';
import { INBOX_SEALED_MARK, type InboxContent, type KeptEntry, openEntry, PLAIN_INBOX, sealEntry, sealingWith } from './inbox-content.ts';


/** Far more than any decision or request (an edited input, an answer): a larger file is not one. */
const MAX_ENTRY_BYTES = 16 * 1024 * 1024;
/** Test-only: where an entry's write may be stopped, to check what a kill there leaves. */
export type WritePoint = 'temp' | 'link';

export interface InboxKind<T extends object> {
  /** The folder under the state directory. */
  readonly dir: string;
  /** The envelope's format, and the field of it that holds the entry. */
  readonly format: string;
  readonly field: string;
  /** What an entry is called in an error's words ("decision", "cancel request"), and all of them ("decisions"). */
  words(key: string): string;
  readonly plural: string;
  /** Throws when the key cannot be a file name of the inbox (checked before any path is made). */
  checkKey(key: string): void;
  keyOf(entry: T): string;
  /** The entry the file holds, or why it is not one (a message for an error, never a guess). */
  entryOf(value: unknown, key: string): T | { problem: string };
  /** The fault point a test's disk-full injection names. */
  readonly faultPoint: string;
  /** The entry's fields that are the run's content: sealed in a sealed run (inbox-content.ts). */
  readonly contentFields: readonly string[];
  /** Where an entry's sealed values belong (they open only there): its key, and its time where a key is used again. */
  placeOf(entry: T): string;
}

export const INBOX_ENVELOPE_VERSION = 1;

export interface KeyedInboxOptions {
  /** Test-only: called as the write passes a point (a test kills the process there). */
  onPoint?: ((point: WritePoint) => void) | undefined;
  /** Test-only: the write fails half-way with ENOSPC when this returns true (a full disk). */
  failWrite?: (() => boolean) | undefined;
  /** The run's sealing (a sealed run's entries are sealed); default plain. */
  content?: InboxContent | undefined;
}

/** What a read found in one file: its entry, or why the file is not one. */
export type ReadEntry<T extends object> = { entry: T } | { file: string; problem: string } | null;

const ENTRY_FILE = /^(.+)\.json$/;

export class KeyedFileInbox<T extends object> {
  readonly dir: string;

  constructor(
    stateDir: string,
    private readonly kind: InboxKind<T>,
    private readonly options: KeyedInboxOptions = {},
  ) {
    this.dir = path.join(stateDir, kind.dir);
  }

  private get content(): InboxContent {
    return this.options.content ?? PLAIN_INBOX;
  }

  fileOf(key: string): string {
    this.kind.checkKey(key);
    return path.join(this.dir, `${key}.json`);
  }

  /**
   * Writes the entry whole and exclusively, durable when it resolves; 'exists' (nothing written)
   * when its key has one. In a sealed run its content is sealed first; without the run's key an
   * entry with content is refused (inbox-content.ts), nothing written. The file is written before
   * this returns whenever the store knows the run (a run's own process asking, say): only a
   * writer that must read the run first writes it later.
   */
  put(entry: T): Promise<'written' | 'exists'> {
    try {
      const key = this.kind.keyOf(entry);
      const file = this.fileOf(key);
      const kept = sealEntry(entry, this.kind.contentFields, this.kind.placeOf(entry), this.content);
      if (kept instanceof Promise) return kept.then((sealed) => this.write(key, file, sealed));
      return Promise.resolve(this.write(key, file, kept));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private write(key: string, file: string, kept: KeptEntry<T>): 'written' | 'exists' {
    try {
      fs.mkdirSync(this.dir, { recursive: true, mode: PRIVATE_DIR });
      this.sweepTemps(key);
      const envelope = { format: this.kind.format, version: INBOX_ENVELOPE_VERSION, [this.kind.field]: kept.entry, ...(kept.sealed !== null ? { [INBOX_SEALED_MARK]: kept.sealed } : {}) };
      return createFileExclusively(file, `${JSON.stringify(envelope)}\n`, {
        mode: PRIVATE_FILE,
        onPoint: this.options.onPoint,
        failWrite: this.options.failWrite,
        faultPoint: this.kind.faultPoint,
      });
    } catch (error) {
      throw environmentProblem(error, `write the ${this.kind.words(key)} ${file}`, file) ?? error;
    }
  }

  /** The key's entry, null when there is none, or why its file is not one. */
  get(key: string): ReadEntry<T> {
    const file = this.fileOf(key);
    let text: string;
    try {
      text = readRegularFile(file, `the ${this.kind.words(key)}`, MAX_ENTRY_BYTES);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      // A FIFO, a link or a device where an entry belongs is not an entry: said like a damaged one, with its path.
      if (error instanceof NotARegularFileError) return { file, problem: `it is ${error.found}, not a regular file` };
      throw environmentProblem(error, `read the ${this.kind.words(key)} ${file}`, file) ?? error;
    }
    const found = this.entryIn(text, key);
    return 'problem' in found ? { file, problem: found.problem } : { entry: found };
  }

  /** The keys of the entries there, in name order; cheap when the inbox was never written (one stat). */
  keys(): string[] {
    let names: string[];
    try {
      // A stat that does not throw: no error object is built for the usual "nothing ever written".
      if (!fs.statSync(this.dir, { throwIfNoEntry: false })) return [];
      names = fs.readdirSync(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw environmentProblem(error, `read the ${this.kind.plural} in ${this.dir}`, this.dir) ?? error;
    }
    const keys: string[] = [];
    for (const name of names.sort()) {
      const key = ENTRY_FILE.exec(name)?.[1];
      if (key !== undefined && keyFits(this.kind, key)) keys.push(key);
    }
    return keys;
  }

  /** Removes the key's entry durably, with any temporary file a killed writer left for it. */
  remove(key: string): void {
    const file = this.fileOf(key);
    try {
      fs.rmSync(file, { force: true });
      this.sweepTemps(key);
      if (fs.existsSync(this.dir)) fsyncDir(this.dir);
    } catch (error) {
      throw environmentProblem(error, `remove the ${this.kind.words(key)} ${file}`, file) ?? error;
    }
  }

  /**
   * Seals the content of each entry written plain, for a plain run being sealed in (keys rotate
   * --seal-plain), which holds the run's lock: no writer takes or settles an entry meanwhile, and
   * another process's new entry has a key of its own (a key's entry is never written over). Each
   * is replaced whole (temp file, fsync, rename), so a kill leaves it plain or sealed, both read.
   * An entry without content, one sealed already, or a file that is not a whole entry is left as
   * it is. How many were sealed.
   */
  sealPlainEntries(sealer: ValueSealer): number {
    let sealed = 0;
    for (const key of this.keys()) {
      const file = this.fileOf(key);
      let envelope: Record<string, unknown>;
      try {
        envelope = JSON.parse(readRegularFile(file, `the ${this.kind.words(key)}`, MAX_ENTRY_BYTES)) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (envelope?.format !== this.kind.format || envelope.version !== INBOX_ENVELOPE_VERSION || envelope[INBOX_SEALED_MARK] !== undefined) continue;
      const entry = this.kind.entryOf(envelope[this.kind.field], key);
      if ('problem' in entry) continue;
      const kept = sealEntry(entry, this.kind.contentFields, this.kind.placeOf(entry), sealingWith(sealer)) as KeptEntry<T>;
      if (kept.sealed === null) continue;
      try {
        writeFileDurably(file, `${JSON.stringify({ ...envelope, [this.kind.field]: kept.entry, [INBOX_SEALED_MARK]: kept.sealed })}\n`, PRIVATE_FILE);
      } catch (error) {
        throw environmentProblem(error, `seal the ${this.kind.words(key)} ${file}`, file) ?? error;
      }
      sealed++;
    }
    return sealed;
  }

  private entryIn(text: string, key: string): T | { problem: string } {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      return { problem: `not JSON: ${(error as Error).message}` };
    }
    const envelope = parsed as Record<string, unknown> | null;
    if (envelope?.format !== this.kind.format) return { problem: `its format is not ${this.kind.format}` };
    if (envelope.version !== INBOX_ENVELOPE_VERSION) return { problem: `version ${String(envelope.version)}; this version reads ${INBOX_ENVELOPE_VERSION}` };
    const sealed = envelope[INBOX_SEALED_MARK];
    if (sealed !== undefined && typeof sealed !== 'string') return { problem: 'its "sealed" mark is not a key id' };
    const entry = this.kind.entryOf(envelope[this.kind.field], key);
    if ('problem' in entry) return entry;
    return openEntry(entry, sealed ?? null, this.kind.contentFields, this.kind.placeOf(entry), this.content);
  }

  /** Temporary files of this key left by a writer that was killed (its process is gone). */
  private sweepTemps(key: string): void {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return;
    }
    const prefix = `${key}.json.tmp-`;
    for (const name of names) {
      if (!name.startsWith(prefix)) continue;
      const pid = Number(name.slice(prefix.length).split('-')[0]);
      if (Number.isInteger(pid) && pid > 0 && !isAlive(pid)) fs.rmSync(path.join(this.dir, name), { force: true });
    }
  }
}

function keyFits<T extends object>(kind: InboxKind<T>, key: string): boolean {
  try {
    kind.checkKey(key);
    return true;
  } catch {
    return false;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
