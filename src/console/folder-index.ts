/**
 * The rows of one state folder's runs (its own run, its runs by id, their archived runs), kept
 * in memory and kept current by watches, so an answer of the list costs what changed since the
 * last one, not what the folder holds. A watch on the state folder, one on runs/ and one on each
 * run's folder (and on its control inbox once it has one) mark what an event touched; the next
 * answer reads again only those (three stats each, and the journal only when they changed).
 *
 * A watch may miss or merge events, and a folder may have none (the system's limit reached): a
 * folder without a watch is looked at in every answer, and every folder is looked at again in
 * the background now and then, so a row is never wrong for longer than that.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTick } from 'node:timers/promises';
import { CONTROL_DIR, RUNS_DIR } from '../store/open-store.ts';
import type { ConsoleRow } from './console-row.ts';
import { RunsIndex } from '../runtime/runs-index.ts';
import { type ArchivedRows, folderSignature, indexedRows, readDir, readFolderRows, type RunFolder } from './folder-rows.ts';
import type { FolderWatches } from './folder-watches.ts';
import type { SortedRows } from './sorted-rows.ts';

interface Folder extends RunFolder {
  rows: ConsoleRow[];
  /** Its signature when its rows were read; null: never read. */
  signature: string | null;
  archived: ArchivedRows;
  watchers: fs.FSWatcher[];
  /** The watch on its control inbox, once it has one. */
  controlWatcher: fs.FSWatcher | null;
  /** Whether its folder has a watch: without one it is looked at in every answer. */
  watched: boolean;
  controlWatched: boolean;
}

/** How many folders the background look takes between two turns of the event loop. */
const SWEEP_SLICE = 256;

export class FolderIndex {
  private readonly folders = new Map<string, Folder>();
  /** Folders an event touched since they were last read. */
  private readonly dirty = new Set<Folder>();
  /** Folders with no watch: looked at in every answer. */
  private readonly unwatched = new Set<Folder>();
  /** Names under runs/ an event named: a run added, removed or replaced. */
  private readonly names = new Set<string>();
  private started = false;
  /** Read runs/ in full at the next answer (at the start, after an event without a name, after a sweep). */
  private listRuns = true;
  private runsWatcher: fs.FSWatcher | null = null;
  /** runs/ has no watch (the limit, or not there yet): read in full at every answer. */
  private runsUnwatched = true;
  private sweeping = false;
  /** The console is closing: a refresh under way stops at its next turn of the event loop. */
  private closed = false;
  /**
   * The folder's index on disk (runs-index.json, which list writes): a run folder whose signature
   * it holds is not read at the first answer. Read, never written: the console's GETs change no file.
   */
  private persisted: RunsIndex | null = null;

  constructor(
    private readonly index: number,
    private readonly root: string,
    private readonly sorted: SortedRows,
    private readonly watches: FolderWatches,
  ) {}

  /** Brings the rows up to date with what changed since the last call. */
  async refresh(): Promise<void> {
    if (this.closed || (!this.started && !this.start())) return;
    const own = this.folders.get('')!;
    if (this.dirty.has(own) && !isDir(this.root)) {
      this.stop();
      return;
    }
    if (this.runsUnwatched && this.runsWatcher === null) this.watchRuns();
    if (this.listRuns || this.runsUnwatched) {
      this.listRuns = false;
      const there = new Set(readDir(path.join(this.root, RUNS_DIR)));
      for (const name of there) if (!this.folders.has(name)) this.names.add(name);
      for (const id of this.folders.keys()) if (id !== '' && !there.has(id)) this.names.add(id);
    }
    // In slices: the first look at a folder of ten thousand runs (a watch and three stats each)
    // runs after an answer from the index's head, and must not hold up the answers after it.
    let n = 0;
    for (const name of [...this.names]) {
      this.names.delete(name);
      this.lookAt(name);
      if (++n % SWEEP_SLICE === 0 && !(await this.turn())) return;
    }
    const due = new Set([...this.dirty, ...this.unwatched]);
    for (const folder of due) {
      this.dirty.delete(folder);
      await this.read(folder);
      if (++n % SWEEP_SLICE === 0 && !(await this.turn())) return;
    }
  }

  /** Stops a refresh under way at its next turn (the console closing); stop() ends the watches after it. */
  close(): void {
    this.closed = true;
  }

  /** Lets the event loop turn; false when the console closed meanwhile. */
  private async turn(): Promise<boolean> {
    await nextTick();
    return !this.closed;
  }

  /** Looks at every folder again without waiting for an event: what a missed event left wrong is marked to be read. */
  async sweep(): Promise<void> {
    if (!this.started || this.sweeping) return;
    this.sweeping = true;
    try {
      this.listRuns = true;
      let n = 0;
      for (const folder of [...this.folders.values()]) {
        if (folder.signature !== null && folderSignature(folder.dir) !== folder.signature) this.dirty.add(folder);
        if (++n % SWEEP_SLICE === 0) await nextTick();
      }
    } finally {
      this.sweeping = false;
    }
  }

  stop(): void {
    for (const folder of [...this.folders.values()]) this.remove(folder);
    this.runsWatcher?.close();
    this.runsWatcher = null;
    this.runsUnwatched = true;
    this.started = false;
    this.listRuns = true;
  }

  private start(): boolean {
    if (!isDir(this.root)) return false;
    this.started = true;
    this.add('', this.root);
    this.listRuns = true;
    return true;
  }

  private watchRuns(): void {
    this.runsWatcher?.close();
    this.runsWatcher = null;
    const watcher = this.watches.open(
      path.join(this.root, RUNS_DIR),
      (_event, name) => {
        if (name === null) this.listRuns = true;
        else this.names.add(name);
      },
      () => {
        this.runsWatcher = null;
        this.runsUnwatched = true;
      },
    );
    this.runsWatcher = typeof watcher === 'string' ? null : watcher;
    this.runsUnwatched = this.runsWatcher === null;
  }

  /** A name under runs/ an event named: a new run, one gone, or one replaced (its watch then is on a folder no more there). */
  private lookAt(name: string): void {
    const dir = path.join(this.root, RUNS_DIR, name);
    const existing = this.folders.get(name);
    if (existing) this.remove(existing);
    if (isDir(dir)) this.add(name, dir);
  }

  private add(id: string, dir: string): void {
    const folder: Folder = { index: this.index, root: this.root, folderId: id === '' ? null : id, dir, rows: [], signature: null, archived: new Map(), watchers: [], controlWatcher: null, watched: false, controlWatched: false };
    this.folders.set(id, folder);
    const watcher = this.watches.open(dir, (_event, name) => this.touched(folder, name), () => this.lost(folder));
    if (watcher === 'gone') {
      this.folders.delete(id);
      return;
    }
    if (watcher !== 'limit') {
      folder.watchers.push(watcher);
      folder.watched = true;
    } else this.unwatched.add(folder);
    this.dirty.add(folder);
  }

  private touched(folder: Folder, name: string | null): void {
    this.dirty.add(folder);
    if (folder.folderId === null && (name === RUNS_DIR || name === null)) {
      // runs/ made, removed or replaced: watch the one there now and read it in full.
      this.runsWatcher?.close();
      this.runsWatcher = null;
      this.runsUnwatched = true;
      this.listRuns = true;
    }
    if (folder.folderId !== null && name === path.basename(folder.dir)) this.names.add(folder.folderId);
    if (name === CONTROL_DIR) folder.controlWatched = false;
  }

  private lost(folder: Folder): void {
    folder.watched = false;
    this.unwatched.add(folder);
    this.dirty.add(folder);
  }

  private remove(folder: Folder): void {
    for (const watcher of folder.watchers) watcher.close();
    folder.watchers = [];
    folder.controlWatcher?.close();
    folder.controlWatcher = null;
    for (const row of folder.rows) this.sorted.remove(row);
    folder.rows = [];
    this.dirty.delete(folder);
    this.unwatched.delete(folder);
    this.folders.delete(folder.folderId ?? '');
  }

  private async read(folder: Folder): Promise<void> {
    // A pause is a file in the control inbox, which the folder's own watch does not see into.
    if (folder.watched && !folder.controlWatched) this.watchControl(folder);
    const signature = folderSignature(folder.dir);
    if (signature === folder.signature) return;
    folder.signature = signature;
    this.persisted ??= RunsIndex.load(this.root);
    const id = folder.folderId ?? '';
    const indexed = this.persisted.get(id, signature);
    const rows = indexed ? indexedRows(folder, indexed) : await readFolderRows(folder, folder.archived);
    if (this.folders.get(folder.folderId ?? '') !== folder) return;
    for (const row of folder.rows) this.sorted.remove(row);
    folder.rows = rows;
    for (const row of rows) this.sorted.add(row);
  }

  private watchControl(folder: Folder): void {
    const dir = path.join(folder.dir, CONTROL_DIR);
    folder.controlWatcher?.close();
    folder.controlWatcher = null;
    if (!isDir(dir)) return;
    folder.controlWatched = true;
    const watcher = this.watches.open(dir, () => this.dirty.add(folder), () => this.lost(folder));
    if (watcher === 'limit') this.lost(folder);
    else if (watcher !== 'gone') folder.controlWatcher = watcher;
  }
}

function isDir(dir: string): boolean {
  return fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true;
}
