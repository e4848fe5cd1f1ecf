/**
 * The runs the console shows: every run of its folders (a folder's own run, its runs by id, its
 * archived runs) and, with a database, every run of the fleet. The folders' rows are an index in
 * memory kept current by watches (folder-index.ts); the fleet's come from one query an answer.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_TENANT, tenantOf } from '../core/tenant.ts';
import { readJournal } from '../store/journal/journal-reader.ts';
import { type Database, folderOfState, openRunsFolder, openStore } from '../store/open-store.ts';
import type { FolderRunStore, RunStore } from '../store/store.ts';
import { ConsoleRunNotFoundError } from './console-errors.ts';
import { type ConsoleRow, FLEET_KEY, KEY_SEPARATOR, keyOf, newestFirst, RUN_CATEGORIES, type RunCategory } from './console-row.ts';
import { fleetCounts, fleetRows, fleetTenantOf, fleetTenants, type ListCursor } from './fleet-rows.ts';
import { FolderIndex } from './folder-index.ts';
import { headRows } from './head-rows.ts';
import { HEAD_ENDED_RUNS } from '../runtime/runs-index.ts';
import { ARCHIVE_DIR } from './folder-rows.ts';
import { FolderWatches, type WatchFolder, watchFolder } from './folder-watches.ts';
import { SortedRows } from './sorted-rows.ts';

export { categoryOf, type ConsoleRow, keyOf, RUN_CATEGORIES, type RunCategory } from './console-row.ts';
export type { ListCursor } from './fleet-rows.ts';

/** A run found by its key: the store to read and decide through, or the archived journal it only reads. */
export interface ConsoleRun {
  key: string;
  source: 'folder' | 'fleet';
  /** Null for an archived run: only its journal file is read. */
  store: RunStore | null;
  /** The archived journal's path. */
  archivedJournal: string | null;
  /** The directory the run works in (the one given to demo or run): its tools' directory. */
  runDir: string | null;
  /** A folder run's state folder and its place in the list given: where a fork of it goes, as a run by id. */
  folder: { root: string; index: number } | null;
}

export interface ListAsked {
  category?: string | undefined;
  /** Part of a run's id or task, any case. */
  query?: string | undefined;
  limit: number;
  /** How many of the rows that match come before the page (read and passed over: `after` costs less). */
  offset?: number | undefined;
  /** The page after this row (the last one of the page before): found, not counted to. */
  after?: ListCursor | undefined;
  /** Only this tenant's runs (a caller of one tenant, or a filter); its counts are that tenant's too. */
  tenant?: string | undefined;
}

export interface RunList {
  /** The newest `limit` rows that match, newest save first. */
  rows: ConsoleRow[];
  matching: number;
  counts: Record<RunCategory, number>;
  total: number;
  /** More rows match after the page's last one. */
  more: boolean;
}

export interface RunSourcesOptions {
  /** A line for the console's output (that some folders cannot be watched). */
  notice?: ((line: string) => void) | undefined;
  /** Test-only: the watch on one folder (default fs.watch). */
  watch?: WatchFolder | undefined;
  /** How often every folder is looked at again, whatever the watches said (default 30 s). */
  sweepMs?: number | undefined;
}

/** The backstop for an event a watch missed: every folder looked at again this often, in the background. */
export const SWEEP_MS = 30_000;

/** The folders' rows an answer is taken from: the index in memory, or the heads of the folders' indexes on disk. */
type FolderRows = Pick<SortedRows, 'ordered' | 'count' | 'placeAfter'>;

export class RunSources {
  private readonly roots: string[];
  private readonly sorted = new SortedRows();
  private readonly indexes: FolderIndex[];
  private readonly sweeper: NodeJS.Timeout;
  /** One refresh at a time: each answer waits for its own, begun after it came. */
  private refreshed: Promise<void> = Promise.resolve();
  private readonly searchText = new WeakMap<ConsoleRow, string>();
  /** The indexes in memory have looked at every run folder once: answers are theirs from then on. */
  private looked = false;
  /** That first look, begun in the background after an answer from the heads. */
  private firstLook: Promise<void> | null = null;
  /** The tenants of the last answer from the heads, while the indexes have not looked yet. */
  private headTenants: string[] = [];

  constructor(
    /** The state folders (DIR/.durable-agent) of the directories given. */
    roots: readonly string[],
    private readonly pool: Database | null,
    options: RunSourcesOptions = {},
  ) {
    this.roots = roots.map((root) => path.resolve(root));
    const watches = new FolderWatches(options.watch ?? watchFolder, options.notice ?? (() => {}));
    this.indexes = this.roots.map((root, index) => new FolderIndex(index, root, this.sorted, watches));
    this.sweeper = setInterval(() => {
      for (const index of this.indexes) void index.sweep().catch(() => {});
    }, options.sweepMs ?? SWEEP_MS);
    this.sweeper.unref();
  }

  /**
   * The rows that match, newest save first; a run that cannot be read is listed with its problem,
   * never left out. Without a search the fleet gives only the page's rows, read by an index from
   * the cursor on, and its counts; a search reads every fleet row, as it looks into each task.
   */
  async list(asked: ListAsked): Promise<RunList> {
    let folderRows: FolderRows | null = await this.fromHeads(asked);
    if (!folderRows) {
      await this.refresh();
      this.looked = true;
      folderRows = this.sorted;
    }
    const query = (asked.query ?? '').trim().toLowerCase();
    const category = RUN_CATEGORIES.includes(asked.category as RunCategory) ? (asked.category as RunCategory) : asked.category ? null : undefined;
    const skip = asked.offset ?? 0;
    const { tenant } = asked;
    const [fleet, fleetCounted] = this.pool
      ? await Promise.all([
          category === null ? [] : fleetRows(this.pool, { category, after: asked.after, limit: query === '' ? skip + asked.limit + 1 : undefined, tenant }),
          fleetCounts(this.pool, tenant),
        ])
      : [[], null];
    const counts = Object.fromEntries(RUN_CATEGORIES.map((name) => [name, folderRows.count(name, tenant) + (fleetCounted?.[name] ?? 0)])) as Record<RunCategory, number>;
    const total = RUN_CATEGORIES.reduce((sum, name) => sum + counts[name], 0);
    const rows: ConsoleRow[] = [];
    let matching = 0;
    let more = false;
    const folder = folderRows.ordered;
    let f = asked.after ? folderRows.placeAfter(asked.after) : 0;
    let q = 0;
    // The two lists are each in order: merged, the first `limit` that match are the page.
    while (f < folder.length || q < fleet.length) {
      const row = q >= fleet.length || (f < folder.length && newestFirst(folder[f]!, fleet[q]!) <= 0) ? folder[f++]! : fleet[q++]!;
      if (category === null || (category !== undefined && row.category !== category)) continue;
      if (tenant !== undefined && row.tenant !== tenant) continue;
      if (query !== '' && !this.textOf(row).includes(query)) continue;
      matching++;
      if (matching <= skip) continue;
      if (rows.length < asked.limit) rows.push(row);
      else {
        more = true;
        // Without a search the count of a state is known: the rest need not be looked at.
        if (query === '') break;
      }
    }
    // Without a search, what matches is counted by state: from a cursor on, the rows before it are not looked at.
    if (query === '') matching = category === null ? 0 : category === undefined ? total : counts[category];
    return { rows, matching, counts, total, more };
  }

  /**
   * The first page before the indexes in memory have looked at every run folder: from each
   * folder's index's head, which holds the runs not ended and the newest of those that have, and
   * counts them all; the look at every folder (and its watches) begins after this answer, in the
   * background. Null for any other page, or when a head cannot be believed: the answer then waits
   * for the look.
   */
  private async fromHeads(asked: ListAsked): Promise<FolderRows | null> {
    const plain = asked.tenant === undefined && !asked.category && !asked.query?.trim() && !asked.offset && !asked.after;
    if (this.looked || !plain || asked.limit >= HEAD_ENDED_RUNS) return null;
    const sorted = new SortedRows();
    const ended = new Map<RunCategory, number>();
    const tenants = new Set<string>();
    for (const [index, root] of this.roots.entries()) {
      const head = await headRows(index, root);
      if (!head) return null;
      for (const row of [...head.live, ...head.ended]) sorted.add(row);
      for (const [tenant, counts] of Object.entries(head.endedCounts)) {
        tenants.add(tenant);
        for (const [category, count] of Object.entries(counts)) ended.set(category as RunCategory, (ended.get(category as RunCategory) ?? 0) + count);
      }
      // The newest ended rows are among the counts already: only the others' are added to them.
      for (const row of head.ended) ended.set(row.category, ended.get(row.category)! - 1);
    }
    this.headTenants = [...new Set([...sorted.tenants, ...tenants])];
    this.firstLook ??= this.refresh().then(
      () => {
        this.looked = true;
      },
      () => {
        this.firstLook = null;
      },
    );
    return { ordered: sorted.ordered, placeAfter: (after) => sorted.placeAfter(after), count: (category) => sorted.count(category) + (ended.get(category) ?? 0) };
  }

  /** The tenants some run is of, as the last list found them: the folders', and the fleet's that are set or have runs not finished. */
  async tenants(): Promise<string[]> {
    const names = new Set([...this.sorted.tenants, ...(this.looked ? [] : this.headTenants), ...(this.pool ? await fleetTenants(this.pool) : [])]);
    return [...names].sort();
  }

  /**
   * The run of a key (ConsoleRunNotFoundError for a key that names none). With `tenant`, a run of
   * another tenant is not found either: to a caller of one tenant, another's runs do not exist.
   */
  async run(key: string, tenant: string | null = null): Promise<ConsoleRun> {
    const run = await this.find(key);
    if (tenant !== null && (await this.tenantOf(run)) !== tenant) throw new ConsoleRunNotFoundError(key);
    return run;
  }

  private async find(key: string): Promise<ConsoleRun> {
    const parts = key.split(KEY_SEPARATOR);
    if (parts[0] === FLEET_KEY && parts.length === 2 && this.pool) {
      // Loaded here: a console of folders alone runs without pg installed.
      const { openDatabaseStore } = await import('../store/pg/index.ts');
      const store = openDatabaseStore(this.pool, parts[1]!);
      if (!(await store.exists())) throw new ConsoleRunNotFoundError(key);
      return { key, source: 'fleet', store, archivedJournal: null, runDir: null, folder: null };
    }
    const [index, folderId, archived] = parts;
    const root = this.roots[Number(index)];
    if (parts.length !== 3 || root === undefined || !/^\d+$/.test(index!)) throw new ConsoleRunNotFoundError(key);
    const runs = openRunsFolder(root);
    let store: FolderRunStore;
    try {
      store = folderId === '' ? openStore({ dir: root }) : runs.store(folderId!);
    } catch {
      throw new ConsoleRunNotFoundError(key);
    }
    // A run by id works in the same directory as the folder's own run: DIR, whose state folder is root.
    const runDir = folderOfState(root);
    const folder = { root, index: Number(index) };
    if (archived !== '') {
      const journal = path.join(store.location, ARCHIVE_DIR, `${archived}.jsonl`);
      if (!/^journal-[^/\\]*$/.test(archived!) || keyOf(Number(index), folderId || null, journal) !== key || !fs.statSync(journal, { throwIfNoEntry: false })?.isFile()) throw new ConsoleRunNotFoundError(key);
      return { key, source: 'folder', store: null, archivedJournal: journal, runDir, folder };
    }
    if (!(await store.exists())) throw new ConsoleRunNotFoundError(key);
    return { key, source: 'folder', store, archivedJournal: null, runDir, folder };
  }

  /**
   * Whose a run is, as its row says it: the fleet's column, else the journal's header (read from
   * its last snapshot on). A journal that cannot be read is the default tenant's, as its row is.
   */
  private async tenantOf(run: ConsoleRun): Promise<string> {
    if (run.source === 'fleet') return (await fleetTenantOf(this.pool!, run.store!.runId!)) ?? DEFAULT_TENANT;
    try {
      if (run.archivedJournal !== null) return tenantOf(readJournal(run.archivedJournal, fs.readFileSync(run.archivedJournal), { fromLastSnapshot: true }).header);
      return tenantOf((await run.store!.load({ fromLastSnapshot: true })).header);
    } catch {
      return DEFAULT_TENANT;
    }
  }

  /** Ends the watches and the background look. */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    for (const index of this.indexes) index.close();
    await this.refreshed.catch(() => {});
    for (const index of this.indexes) index.stop();
  }

  private refresh(): Promise<void> {
    const next = this.refreshed.then(async () => {
      // Watch events already delivered to the process are taken first: a write that ended before
      // this answer was asked for is then marked, whichever the event loop would have run first.
      await new Promise((resolve) => setImmediate(resolve));
      for (const index of this.indexes) await index.refresh();
    });
    this.refreshed = next.catch(() => {});
    return next;
  }

  private textOf(row: ConsoleRow): string {
    let text = this.searchText.get(row);
    if (text === undefined) {
      text = `${row.runId}\u0000${row.task}`.toLowerCase();
      this.searchText.set(row, text);
    }
    return text;
  }
}
