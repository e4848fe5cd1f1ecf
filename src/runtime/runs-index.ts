/**
 * The index of a folder of runs (DIR/.durable-agent/runs-index.json): each run folder's
 * summaries as they were read from its journals, under the folder's signature then (its
 * journal's inode, size and time, its control inbox's and its archive's times). A listing takes
 * a folder's summaries from the index only while the signature is the same, and reads the
 * journals of any other folder again, so the index is never believed over a journal: a record
 * appended, a journal moved in, a pause asked each change the signature. A summary with a
 * problem (an unreadable journal) is never kept: it is read again each time.
 *
 * The file is written whole, to a temp file of the writer's own, synced, then renamed over the
 * index: a reader sees the old index or the new one, never a part, whichever process wrote last
 * and wherever a kill fell. An index that is missing, damaged or of another version is no index:
 * every journal is read, and the index written again from them.
 *
 * Its head, first in the file and read alone (RunsIndex.head), holds what a question about the
 * runs that have not ended needs (`list --state waiting`): those runs' folders, how many runs
 * that ended each run has as children, and the time of the folder of runs (ROOT/runs) when the
 * whole folder was last read. While that time stays, no run was added or removed, and no run that
 * had ended was written to again (a writer moves it when it does: store/runs-changed.ts): the
 * ended runs are as the index has them, and only the others are looked at. A time taken within
 * RACY_MS of the look is never trusted: a change in the same tick of the file system's clock
 * would leave it as it was. After the head, and read with it only by the console, the index keeps
 * what the console's first page needs of the ended runs, believed under the same time: the
 * newest of them in the page's order, and how many there are of each tenant and category, so
 * that page is answered from the head, this and the runs not ended.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { STATE_DIR } from '../store/state-folder-of.ts';
import { CONTROL_DIR, JOURNAL_FILE, RUNS_DIR } from '../store/open-store.ts';
import { FINAL_STATES } from '../../machines/agent-loop.types.ts';
import type { RunCategory, RunSummary } from './run-summary.ts';

export const RUNS_INDEX_FILE = 'runs-index.json';
export const ARCHIVE_DIR = 'archive';
const VERSION = 1;
/** A temp file left by a writer killed before its rename is removed by a later writer once it is this old. */
const STALE_TEMP_MS = 60_000;
/** A folder's time this close to the look that read it may be shared by a change right after: not trusted (the coarsest clock of a file system in use, FAT's, ticks every 2 s). */
export const RACY_MS = 2000;
/** The file begins so, the head's length in a fixed width: the head is read without the rest. */
const HEAD_PREFIX = `{"version":${VERSION},"headBytes":"`;
const HEAD_DIGITS = 10;
const HEAD_START = `","head":`;
const PAGE_PREFIX = `,"pageBytes":"`;
const PAGE_START = `","page":`;
/**
 * How many of the ended runs the head keeps, newest first: more than the console's first page
 * (100 rows), the one after its last telling that a page follows. A page that needs more is
 * answered from every run.
 */
export const HEAD_ENDED_RUNS = 128;

/** A run of a folder as the index keeps it: its summary but where it lives, which the reader knows. */
export interface IndexedRun {
  /** The archived journal's file name (journal-….jsonl); null for the folder's current run. */
  archivedJournal: string | null;
  summary: Omit<RunSummary, 'location'>;
}

export interface IndexedFolder {
  signature: string;
  runs: IndexedRun[];
}

/** The folder of runs (ROOT/runs) as a stat saw it: its inode and time. */
export interface FolderStamp {
  ino: number;
  mtimeMs: number;
}

/** What the index knew of the whole folder when it last read it whole; null when it has not (or it was too recent to trust). */
export interface WholeFolder {
  /** ROOT/runs then. */
  runsDir: FolderStamp;
  /** The signature of the state folder's own run folder (ROOT) then. */
  rootSignature: string;
}

/** A run of an ended folder, with the folder it is in and that folder's signature then. */
export interface EndedRun extends IndexedRun {
  folderId: string;
  signature: string;
}

/** How many runs there are of each tenant, by category. */
export type TenantCounts = Record<string, Partial<Record<RunCategory, number>>>;

/** The head of the index: the whole folder's stamp, the folders whose runs have not all ended, and the children counted among those that have. */
export interface RunsIndexHead {
  whole: WholeFolder | null;
  live: Record<string, IndexedFolder>;
  /** For each run id, how many current runs of the ended folders name it as the run that called them. */
  endedChildren: Record<string, number>;
}

/**
 * What the console's first page needs of the ended runs, written right after the head and
 * believed with it: apart, so `list --state` does not read it (a run's task is kept whole).
 */
export interface EndedPage {
  /** The newest HEAD_ENDED_RUNS runs of the ended folders, in the console's order (endedOrder). */
  newestEnded: EndedRun[];
  /** Every run of the ended folders, counted. */
  endedCounts: TenantCounts;
}

/**
 * The console's order of a state folder's runs: newest save first, then by the key it finds a
 * run by (console-row.ts), whose part past the folder's place in the list is the folder's id and
 * the archived journal's name without its extension.
 */
export function endedOrder(a: EndedRun, b: EndedRun): number {
  const keyA = `${a.folderId}~${archivedName(a)}`;
  const keyB = `${b.folderId}~${archivedName(b)}`;
  return (b.summary.updatedAt ?? 0) - (a.summary.updatedAt ?? 0) || (keyA < keyB ? -1 : keyA > keyB ? 1 : 0);
}

const archivedName = (run: IndexedRun) => (run.archivedJournal === null ? '' : path.basename(run.archivedJournal, '.jsonl'));

/**
 * The head, when it may be believed: ROOT/runs has the time the head saw when the whole folder
 * was last read, that time is old enough to trust, and the state folder's own run folder is as
 * it was. Otherwise null: the whole folder is read.
 */
export function trustedHead(stateFolder: string): RunsIndexHead | null {
  const head = RunsIndex.head(stateFolder);
  return head && believed(stateFolder, head) ? head : null;
}

/** The head and the page after it, under the same rule; null also when the index has no page. */
export function trustedPage(stateFolder: string): { head: RunsIndexHead; page: EndedPage } | null {
  const front = RunsIndex.headAndPage(stateFolder);
  return front?.page && believed(stateFolder, front.head) ? { head: front.head, page: front.page } : null;
}

function believed(stateFolder: string, head: RunsIndexHead): boolean {
  const whole = head.whole;
  if (!whole) return false;
  const runsDir = runsFolderStamp(stateFolder);
  if (!runsDir?.trusted || runsDir.stamp.ino !== whole.runsDir.ino || runsDir.stamp.mtimeMs !== whole.runsDir.mtimeMs) return false;
  return runFolderSignature(stateFolder) === whole.rootSignature;
}

/** A JSON value written after `prefix` and its length in a fixed width and `start`, at `at`, and where it ends; null when it is not all there. */
function readSection<T>(fd: number, at: number, prefix: string, start: string): { value: T; end: number } | null {
  const size = prefix.length + HEAD_DIGITS + start.length;
  const front = Buffer.alloc(size);
  if (fs.readSync(fd, front, 0, size, at) !== size) return null;
  const text = front.toString('latin1');
  const digits = text.slice(prefix.length, prefix.length + HEAD_DIGITS);
  if (!text.startsWith(prefix) || !text.endsWith(start) || !/^\d+$/.test(digits)) return null;
  const length = Number(digits);
  const bytes = Buffer.alloc(length);
  if (fs.readSync(fd, bytes, 0, length, at + size) !== length) return null;
  return { value: JSON.parse(bytes.toString('utf8')) as T, end: at + size + length };
}

/** ROOT/runs now, and whether its time is far enough behind the clock to be trusted; null when there is none. */
export function runsFolderStamp(stateFolder: string, now = Date.now()): { stamp: FolderStamp; trusted: boolean } | null {
  const stat = fs.statSync(path.join(stateFolder, RUNS_DIR), { throwIfNoEntry: false });
  if (!stat?.isDirectory()) return null;
  return { stamp: { ino: stat.ino, mtimeMs: stat.mtimeMs }, trusted: now - stat.mtimeMs > RACY_MS };
}

/** A folder all of whose runs, current and archived, have ended, each read without a problem: it changes only by a writer that marks it. */
export function hasEnded(folder: IndexedFolder): boolean {
  return folder.runs.length > 0 && folder.runs.every((run) => run.summary.problem === null && run.summary.state !== null && FINAL_STATES.includes(run.summary.state));
}

/**
 * What changes when one of a run folder's summaries may: its journal (a record, a new journal
 * moved in), its control inbox (a pause asked or taken back) and its archive (a run moved aside).
 */
export function runFolderSignature(dir: string): string {
  return runFolderLook(dir).signature;
}

/**
 * The signature, and whether one of its times is within RACY_MS of now: a change in the same
 * tick of the file system's clock (the commit mark rewritten in place after its record) may
 * leave all three as they are, so what was read then is not kept under it (keptSignature).
 */
export function runFolderLook(dir: string, now = Date.now()): { signature: string; recent: boolean } {
  const journal = fs.statSync(path.join(dir, JOURNAL_FILE), { throwIfNoEntry: false });
  const control = fs.statSync(path.join(dir, CONTROL_DIR), { throwIfNoEntry: false });
  const archive = fs.statSync(path.join(dir, ARCHIVE_DIR), { throwIfNoEntry: false });
  const signature = `${journal ? `${journal.ino}:${journal.size}:${journal.mtimeMs}` : '-'}|${control?.mtimeMs ?? '-'}|${archive?.mtimeMs ?? '-'}`;
  const newest = Math.max(journal?.mtimeMs ?? 0, control?.mtimeMs ?? 0, archive?.mtimeMs ?? 0);
  return { signature, recent: now - newest <= RACY_MS };
}

/** The signature an index keeps what was read under: a recent one kept so that no later look matches it, and the folder is read again. */
export function keptSignature(look: { signature: string; recent: boolean }): string {
  return look.recent ? `recent|${look.signature}` : look.signature;
}

export class RunsIndex {
  private changed = false;

  private constructor(
    /** The state folder (DIR/.durable-agent). */
    readonly stateFolder: string,
    private readonly folders: Map<string, IndexedFolder>,
    /** An index file was there: it is kept up to date wherever it is. */
    private readonly existed: boolean,
    private whole: WholeFolder | null,
  ) {}

  /**
   * The head alone, read without the rest of the file (its length is written first); null when
   * there is no index, or it has no head or one that cannot be read.
   */
  static head(stateFolder: string): RunsIndexHead | null {
    return RunsIndex.front(stateFolder, false)?.head ?? null;
  }

  /**
   * The head and the page after it (its length written first too), without the folders; the page
   * is null in an index written before it was kept, or one torn inside it.
   */
  static headAndPage(stateFolder: string): { head: RunsIndexHead; page: EndedPage | null } | null {
    return RunsIndex.front(stateFolder, true);
  }

  private static front(stateFolder: string, withPage: boolean): { head: RunsIndexHead; page: EndedPage | null } | null {
    let fd: number;
    try {
      fd = fs.openSync(path.join(stateFolder, RUNS_INDEX_FILE), 'r');
    } catch {
      return null;
    }
    try {
      const head = readSection<RunsIndexHead>(fd, 0, HEAD_PREFIX, HEAD_START);
      if (!head || typeof head.value !== 'object' || head.value === null || typeof head.value.live !== 'object' || typeof head.value.endedChildren !== 'object') return null;
      if (!withPage) return { head: head.value, page: null };
      const page = readSection<EndedPage>(fd, head.end, PAGE_PREFIX, PAGE_START);
      const valid = page && Array.isArray(page.value?.newestEnded) && typeof page.value.endedCounts === 'object' && page.value.endedCounts !== null;
      return { head: head.value, page: valid ? page.value : null };
    } catch {
      return null;
    } finally {
      fs.closeSync(fd);
    }
  }

  /** The index as the file holds it; empty when there is none, or it cannot be read as one. */
  static load(stateFolder: string): RunsIndex {
    const folders = new Map<string, IndexedFolder>();
    const existed = fs.existsSync(path.join(stateFolder, RUNS_INDEX_FILE));
    let whole: WholeFolder | null = null;
    try {
      const data = JSON.parse(fs.readFileSync(path.join(stateFolder, RUNS_INDEX_FILE), 'utf8')) as { version?: unknown; folders?: unknown; head?: Partial<RunsIndexHead> };
      if (data.version === VERSION && typeof data.folders === 'object' && data.folders !== null) {
        for (const [id, folder] of Object.entries(data.folders as Record<string, IndexedFolder>)) {
          if (typeof folder?.signature === 'string' && Array.isArray(folder.runs)) folders.set(id, folder);
        }
        whole = data.head?.whole ?? null;
      }
    } catch {
      // Missing or damaged: no index. The journals are read, and the index written again from them.
    }
    return new RunsIndex(stateFolder, folders, existed, whole);
  }

  /** A run folder's runs ('' for the state folder's own), if its signature is still the one they were read under. */
  get(folderId: string, signature: string): readonly IndexedRun[] | undefined {
    const folder = this.folders.get(folderId);
    return folder?.signature === signature ? folder.runs : undefined;
  }

  /** A run folder's runs as just read; a folder with a run that could not be read is not kept. */
  set(folderId: string, signature: string, runs: readonly IndexedRun[]): void {
    if (runs.some((run) => run.summary.problem !== null)) {
      this.forget(folderId);
      return;
    }
    const kept = this.folders.get(folderId);
    if (kept?.signature === signature && kept.runs.length === runs.length) return;
    this.folders.set(folderId, { signature, runs: runs.map((run) => ({ archivedJournal: run.archivedJournal, summary: { ...run.summary, children: null } })) });
    this.changed = true;
  }

  forget(folderId: string): void {
    if (this.folders.delete(folderId)) this.changed = true;
  }

  /**
   * The whole folder was just read, every folder checked, after ROOT/runs was seen as `runsDir`
   * (null: not there, or too recent to trust) and ROOT as `rootSignature`.
   */
  readWhole(runsDir: FolderStamp | null, rootSignature: string): void {
    const whole = runsDir ? { runsDir, rootSignature } : null;
    if (JSON.stringify(whole) === JSON.stringify(this.whole)) return;
    this.whole = whole;
    this.changed = true;
  }

  /** Drops the folders not among these (runs removed). */
  keepOnly(folderIds: ReadonlySet<string>): void {
    for (const id of [...this.folders.keys()]) if (!folderIds.has(id)) this.forget(id);
  }

  /**
   * Writes the index if it changed: a temp file of this writer's own, synced, renamed over the
   * index. A folder that cannot be written (read-only, full) keeps its old index: it is a cache.
   * One is made only in a state folder of the command line's (DIR/.durable-agent): a folder a
   * program named for its runs itself is read as it is, nothing written in it, unless it has one.
   */
  save(): void {
    if (!this.changed || !fs.existsSync(this.stateFolder)) return;
    if (!this.existed && path.basename(this.stateFolder) !== STATE_DIR) return;
    const file = path.join(this.stateFolder, RUNS_INDEX_FILE);
    const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      const fd = fs.openSync(temp, 'w', 0o600);
      try {
        fs.writeSync(fd, this.text());
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(temp, file);
      this.changed = false;
    } catch {
      fs.rmSync(temp, { force: true });
    }
    this.removeStaleTemps();
  }

  /** The file: the head first, its length in a fixed width before it, then the page the same way, then every folder (the head's too, for a reader of the whole). */
  private text(): string {
    const live: Record<string, IndexedFolder> = {};
    const endedChildren: Record<string, number> = {};
    const ended: EndedRun[] = [];
    const endedCounts: TenantCounts = {};
    for (const [id, folder] of this.folders) {
      // The state folder's own run is looked at every time: no writer marks it.
      if (id === '' || !hasEnded(folder)) {
        live[id] = folder;
        continue;
      }
      for (const run of folder.runs) {
        const { archivedJournal, summary } = run;
        if (archivedJournal === null && summary.calledBy) endedChildren[summary.calledBy.runId] = (endedChildren[summary.calledBy.runId] ?? 0) + 1;
        const counts = (endedCounts[summary.tenant] ??= {});
        counts[summary.category] = (counts[summary.category] ?? 0) + 1;
        ended.push({ folderId: id, signature: folder.signature, ...run });
      }
    }
    const head: RunsIndexHead = { whole: this.whole, live, endedChildren };
    const page: EndedPage = { newestEnded: ended.sort(endedOrder).slice(0, HEAD_ENDED_RUNS), endedCounts };
    const headText = JSON.stringify(head);
    const pageText = JSON.stringify(page);
    const width = (text: string) => String(Buffer.byteLength(text)).padStart(HEAD_DIGITS, '0');
    return `${HEAD_PREFIX}${width(headText)}${HEAD_START}${headText}${PAGE_PREFIX}${width(pageText)}${PAGE_START}${pageText},"folders":${JSON.stringify(Object.fromEntries(this.folders))}}`;
  }

  private removeStaleTemps(): void {
    let names: string[];
    try {
      names = fs.readdirSync(this.stateFolder);
    } catch {
      return;
    }
    for (const name of names) {
      if (!name.startsWith(`${RUNS_INDEX_FILE}.`) || !name.endsWith('.tmp')) continue;
      const temp = path.join(this.stateFolder, name);
      const stat = fs.statSync(temp, { throwIfNoEntry: false });
      if (stat && Date.now() - stat.mtimeMs > STALE_TEMP_MS) fs.rmSync(temp, { force: true });
    }
  }
}
