/**
 * The file store's inbox of signals: `DIR/.durable-agent/signals/`. A signal waiting to be taken
 * is `<name>.json` (sent without an id) or `<name>~<id>.json`, created whole and exclusively (a
 * second one of the same name, or name and id, is not written: see signal-inbox.ts for what that
 * means). A wait takes one by renaming it to `<name>[~<id>]@<tool_use_id>.taken`: one atomic
 * rename binds it to the call, so a kill at any instant leaves it waiting or bound, never both
 * or neither, and a resumed wait finds the one it took. Taken files stay (an id is taken once,
 * ever, so its mark must outlive the take); they go with the run when it is archived or pruned.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createFileExclusively, fsyncDir, writeFileDurably } from '../../util/durable-file.ts';
import { NotARegularFileError, readRegularFile } from '../../util/regular-file.ts';
import { environmentProblem } from '../fs-problems.ts';
import { PRIVATE_DIR, PRIVATE_FILE } from '../state-folder.ts';
import type { ValueSealer } from '../../seal/value-codec.ts';
import { INBOX_SEALED_MARK, type InboxContent, type KeptEntry, openEntry, PLAIN_INBOX, sealEntry, sealingWith } from './inbox-content.ts';
import { type Signal, type SignalDelivery, type SignalInbox, signalProblem } from './signal-inbox.ts';

export const SIGNALS_DIR = 'signals';

const FORMAT = 'durable-agent/signal';
const VERSION = 1;
/** Far more than a signal's data may be (sendSignal caps it): a larger file is not one. */
const MAX_SIGNAL_FILE_BYTES = 4 * 1024 * 1024;

/** `deploy.json`, `deploy~build-7.json`, `deploy~build-7@toolu_01.taken`. */
const SIGNAL_FILE = /^([A-Za-z0-9_-]+)(?:~([A-Za-z0-9_-]+))?(?:\.json|@([A-Za-z0-9_-]+)\.taken)$/;

interface SignalFile {
  file: string;
  /** `<name>` or `<name>~<id>`: what makes two signals the same one. */
  base: string;
  name: string;
  id: string | null;
  /** The call that took it; null while it waits. */
  takenBy: string | null;
}

/** Test-only: called once a wait's signal is bound to its call (renamed), before anything else; a test kills the process there. */
export type SignalPoint = 'signal-taken';

/** A signal's data is what the wait's result carries: a sealed run's is sealed (inbox-content.ts). */
const CONTENT_FIELDS = ['data'];

/** Where a signal's sealed data belongs: its name and id, and when it was sent (a name without an id comes again). */
function placeOf(signal: Signal): string {
  return `inbox/signal/${baseOf(signal.name, signal.id)}@${signal.at}`;
}

export class FileSignalInbox implements SignalInbox {
  readonly dir: string;

  /** `stateDir` is the run's DIR/.durable-agent. */
  constructor(
    stateDir: string,
    private readonly options: { onPoint?: ((point: SignalPoint) => void) | undefined; content?: InboxContent | undefined } = {},
  ) {
    this.dir = path.join(stateDir, SIGNALS_DIR);
  }

  private get content(): InboxContent {
    return this.options.content ?? PLAIN_INBOX;
  }

  async send(signal: Signal): Promise<SignalDelivery> {
    // Sealed before anything is written: a sender without a sealed run's key is refused, nothing sent.
    const sealing = sealEntry(signal, CONTENT_FIELDS, placeOf(signal), this.content);
    return this.sendKept(signal, sealing instanceof Promise ? await sealing : sealing);
  }

  private async sendKept(signal: Signal, { entry: kept, sealed }: KeptEntry<Signal>): Promise<SignalDelivery> {
    const base = baseOf(signal.name, signal.id);
    const file = path.join(this.dir, `${base}.json`);
    const written = this.inEnvironment(`write the signal ${file}`, file, () => {
      fs.mkdirSync(this.dir, { recursive: true, mode: PRIVATE_DIR });
      const before = signal.id === null ? null : this.takerOf(base);
      if (before) return { outcome: 'taken', tool_use_id: before } as const;
      const envelope = { format: FORMAT, version: VERSION, signal: kept, ...(sealed !== null ? { [INBOX_SEALED_MARK]: sealed } : {}) };
      return createFileExclusively(file, `${JSON.stringify(envelope)}\n`, { mode: PRIVATE_FILE }) === 'written' ? 'written' : 'exists';
    });
    if (typeof written === 'object') return written;
    if (signal.id !== null) {
      // A wait may have taken the same signal between the look above and the write: then this
      // one is a second copy of a signal taken once, and is removed (a wait skips such a copy too).
      const taker = this.takerOf(base);
      if (taker) {
        if (written === 'written') this.remove(file);
        return { outcome: 'taken', tool_use_id: taker };
      }
    }
    return written === 'written' ? { outcome: 'delivered' } : { outcome: 'waiting' };
  }

  async takenBy(tool_use_id: string): Promise<Signal | null> {
    const bound = this.files().find((entry) => entry.takenBy === tool_use_id);
    return bound ? this.read(bound.file) : null;
  }

  async take(name: string, tool_use_id: string, before: number): Promise<Signal | null> {
    const files = this.files();
    const taken = new Set(files.filter((entry) => entry.takenBy !== null && entry.id !== null).map((entry) => entry.base));
    const candidates: Array<{ entry: SignalFile; signal: Signal }> = [];
    for (const entry of files) {
      if (entry.name !== name || entry.takenBy !== null) continue;
      // A copy of a signal already taken (its sender lost the race above, and was killed before removing it).
      if (taken.has(entry.base)) {
        this.remove(entry.file);
        continue;
      }
      const signal = this.read(entry.file);
      if (signal && signal.at < before) candidates.push({ entry, signal });
    }
    candidates.sort((a, b) => a.signal.at - b.signal.at || (a.entry.base < b.entry.base ? -1 : 1));
    for (const { entry, signal } of candidates) {
      const target = path.join(this.dir, `${entry.base}@${tool_use_id}.taken`);
      try {
        fs.renameSync(entry.file, target);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw environmentProblem(error, `take the signal ${entry.file}`, entry.file) ?? error;
      }
      this.inEnvironment(`take the signal ${entry.file}`, this.dir, () => fsyncDir(this.dir));
      this.options.onPoint?.('signal-taken');
      return signal;
    }
    return null;
  }

  async waiting(): Promise<Signal[]> {
    const files = this.files();
    const taken = new Set(files.filter((entry) => entry.takenBy !== null && entry.id !== null).map((entry) => entry.base));
    const signals: Signal[] = [];
    for (const entry of files) {
      if (entry.takenBy !== null || taken.has(entry.base)) continue;
      const signal = this.read(entry.file);
      if (signal) signals.push(signal);
    }
    return signals.sort((a, b) => a.at - b.at);
  }

  /**
   * Seals the data of each signal written plain, waiting or taken (a taken one's data is what its
   * wait's result carries), for a run being sealed in under its lock: no wait takes one meanwhile,
   * and a sender's new signal has a name of its own. Each is replaced whole (temp file, fsync,
   * rename: the temp name is no signal's), so a kill leaves it plain or sealed. How many were sealed.
   */
  sealPlainEntries(sealer: ValueSealer): number {
    let sealed = 0;
    for (const { file } of this.files()) {
      let envelope: { format?: unknown; version?: unknown; signal?: unknown; sealed?: unknown };
      try {
        envelope = JSON.parse(readRegularFile(file, 'the signal', MAX_SIGNAL_FILE_BYTES));
      } catch {
        continue;
      }
      if (envelope?.format !== FORMAT || envelope.version !== VERSION || envelope.sealed !== undefined || signalProblem(envelope.signal) !== null) continue;
      const signal = envelope.signal as Signal;
      const kept = sealEntry(signal, CONTENT_FIELDS, placeOf(signal), sealingWith(sealer)) as KeptEntry<Signal>;
      if (kept.sealed === null) continue;
      this.inEnvironment(`seal the signal ${file}`, file, () => writeFileDurably(file, `${JSON.stringify({ ...envelope, signal: kept.entry, [INBOX_SEALED_MARK]: kept.sealed })}\n`, PRIVATE_FILE));
      sealed++;
    }
    return sealed;
  }

  /** The call that took the signal of this name and id, or null. */
  private takerOf(base: string): string | null {
    return this.files().find((entry) => entry.base === base && entry.takenBy !== null)?.takenBy ?? null;
  }

  private files(): SignalFile[] {
    let names: string[];
    try {
      if (!fs.statSync(this.dir, { throwIfNoEntry: false })) return [];
      names = fs.readdirSync(this.dir).sort();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw environmentProblem(error, `read the signals in ${this.dir}`, this.dir) ?? error;
    }
    const files: SignalFile[] = [];
    for (const name of names) {
      const match = SIGNAL_FILE.exec(name);
      if (!match) continue;
      const [, event, id, takenBy] = match;
      files.push({ file: path.join(this.dir, name), base: baseOf(event!, id ?? null), name: event!, id: id ?? null, takenBy: takenBy ?? null });
    }
    return files;
  }

  /** The signal a file holds; null for one that holds none (written by something else): it is never taken. */
  private read(file: string): Signal | null {
    let text: string;
    try {
      text = readRegularFile(file, 'the signal', MAX_SIGNAL_FILE_BYTES);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || error instanceof NotARegularFileError) return null;
      throw environmentProblem(error, `read the signal ${file}`, file) ?? error;
    }
    try {
      const envelope = JSON.parse(text) as { format?: unknown; version?: unknown; signal?: unknown; sealed?: unknown };
      if (envelope.format !== FORMAT || envelope.version !== VERSION || signalProblem(envelope.signal) !== null) return null;
      if (envelope.sealed !== undefined && typeof envelope.sealed !== 'string') return null;
      const signal = envelope.signal as Signal;
      // Data that does not open (damaged, moved, another run's) is no signal: never taken, as a file that holds none.
      const opened = openEntry(signal, envelope.sealed ?? null, CONTENT_FIELDS, placeOf(signal), this.content);
      return 'problem' in opened ? null : opened;
    } catch {
      return null;
    }
  }

  private remove(file: string): void {
    this.inEnvironment(`remove the signal ${file}`, file, () => {
      fs.rmSync(file, { force: true });
      fsyncDir(this.dir);
    });
  }

  private inEnvironment<T>(action: string, target: string, work: () => T): T {
    try {
      return work();
    } catch (error) {
      throw environmentProblem(error, action, target) ?? error;
    }
  }
}

function baseOf(name: string, id: string | null): string {
  return id === null ? name : `${name}~${id}`;
}
