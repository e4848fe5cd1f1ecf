/**
 * The runs the console shows: every run of its folders (a folder's own run, its runs by id, its
 * archived runs) and, with a database, every run of the fleet. Each run has a key the page puts
 * in its address; the key names the folder by its place in the list given, never by its path,
 * so an address cannot reach a folder the console was not given.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Pool } from 'pg';
import type { AgentStateName } from '../../machines/agent-loop.types.ts';
import { totalTokens } from '../../machines/agent-loop.logic.ts';
import { DEMO_TASK } from '../demo/demo-task.ts';
import { estimateCost } from '../model/prices.ts';
import { FileRuns, RUNS_DIR, type StoredRunEntry } from '../store/file-runs.ts';
import { CONTROL_DIR } from '../store/inbox/file-control-inbox.ts';
import { FileStore, JOURNAL_FILE } from '../store/file-store.ts';
import { readJournal } from '../store/journal-reader.ts';
import { foldJournal } from '../store/fold-journal.ts';
import type { RunStore } from '../store/store.ts';
import { ConsoleRunNotFoundError } from './console-errors.ts';

/** The states the list filters by, in the words a person looks for. */
export const RUN_CATEGORIES = ['running', 'waiting', 'paused', 'failed', 'stopped', 'cancelled', 'done', 'unreadable'] as const;
export type RunCategory = (typeof RUN_CATEGORIES)[number];

export interface ConsoleRow {
  key: string;
  source: 'folder' | 'fleet';
  runId: string;
  /** The machine's state; null when the journal cannot be read. */
  state: string | null;
  category: RunCategory;
  task: string;
  turn: number;
  /** Input, output and cache tokens together; null where the list does not read them (the fleet). */
  tokens: number | null;
  /** US dollars at list prices (counted under a cost budget, else estimated); null without a price. */
  costUsd: number | null;
  /** Epoch milliseconds of the last save. */
  updatedAt: number | null;
  archived: boolean;
  /** Why the journal cannot be read. */
  problem: string | null;
  /** The folder or database the run lives in, in words. */
  location: string;
  /** The call it waits for a person's decision on. */
  waitsFor: string | null;
  pausedBy: string | null;
  /** Fleet runs: the worker that holds its lease (while it is held) and the lease's epoch. */
  worker: string | null;
  leaseEpoch: number | null;
}

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

const SEPARATOR = '~';
const FLEET = 'fleet';

export class RunSources {
  private readonly roots: string[];
  /**
   * Each folder run's row, with what its journal and control inbox looked like when it was read:
   * a list of many runs reads again only the runs that changed since (a stat each for the rest).
   */
  private readonly cache = new Map<string, { signature: string; row: ConsoleRow }>();

  constructor(
    /** The state folders (DIR/.durable-agent) of the directories given. */
    roots: readonly string[],
    private readonly pool: Pool | null,
  ) {
    this.roots = roots.map((root) => path.resolve(root));
  }

  /** Every run, newest save first; one that cannot be read is listed with its problem, never left out. */
  async rows(): Promise<ConsoleRow[]> {
    const rows: ConsoleRow[] = [];
    for (const [index, root] of this.roots.entries()) rows.push(...(await folderRows(index, root, this.cache)));
    if (this.pool) rows.push(...(await fleetRows(this.pool)));
    return rows.sort((a, b) => (b.updatedAt ?? 0) - (a.updatedAt ?? 0));
  }

  /** The run of a key (ConsoleRunNotFoundError for a key that names none). */
  async run(key: string): Promise<ConsoleRun> {
    const parts = key.split(SEPARATOR);
    if (parts[0] === FLEET && parts.length === 2 && this.pool) {
      const { PgRunStore } = await import('../store/pg/pg-store.ts');
      const store = new PgRunStore(this.pool, parts[1]!);
      if (!(await store.exists())) throw new ConsoleRunNotFoundError(key);
      return { key, source: 'fleet', store, archivedJournal: null, runDir: null, folder: null };
    }
    const [index, folderId, archived] = parts;
    const root = this.roots[Number(index)];
    if (parts.length !== 3 || root === undefined || !/^\d+$/.test(index!)) throw new ConsoleRunNotFoundError(key);
    const runs = new FileRuns(root);
    let store: FileStore;
    try {
      store = folderId === '' ? new FileStore(root) : runs.store(folderId!);
    } catch {
      throw new ConsoleRunNotFoundError(key);
    }
    // A run by id works in the same directory as the folder's own run: DIR, whose state folder is root.
    const runDir = path.dirname(root);
    if (archived !== '') {
      const entry = runs.entries().find((candidate) => candidate.archived && keyOf(Number(index), candidate.folderId, candidate.location) === key);
      if (!entry) throw new ConsoleRunNotFoundError(key);
      return { key, source: 'folder', store: null, archivedJournal: entry.location, runDir, folder: { root, index: Number(index) } };
    }
    if (!(await store.exists())) throw new ConsoleRunNotFoundError(key);
    return { key, source: 'folder', store, archivedJournal: null, runDir, folder: { root, index: Number(index) } };
  }
}

export function keyOf(index: number, folderId: string | null, archivedJournal: string | null): string {
  return [String(index), folderId ?? '', archivedJournal ? path.basename(archivedJournal, '.jsonl') : ''].join(SEPARATOR);
}

/** What changes when a run's row may: its journal (size, time) and its control inbox (a pause). */
function signatureOf(journal: string, folder: string): string | null {
  const stat = fs.statSync(journal, { throwIfNoEntry: false });
  if (!stat) return null;
  const control = fs.statSync(path.join(folder, CONTROL_DIR), { throwIfNoEntry: false });
  return `${stat.size}:${stat.mtimeMs}:${control?.mtimeMs ?? '-'}`;
}

async function folderRows(index: number, root: string, cache: Map<string, { signature: string; row: ConsoleRow }>): Promise<ConsoleRow[]> {
  const runs = new FileRuns(root);
  const rows: ConsoleRow[] = [];
  for (const entry of folderEntries(root, runs)) {
    const key = keyOf(index, entry.folderId, entry.archived ? entry.location : null);
    const location = entry.folderId === null ? path.dirname(root) : path.join(root, RUNS_DIR, entry.folderId);
    const signature = signatureOf(entry.location, entry.folderId === null ? root : location);
    const cached = cache.get(key);
    if (signature !== null && cached?.signature === signature) {
      rows.push(cached.row);
      continue;
    }
    const row = await folderRow(key, entry, location, root, runs);
    if (signature !== null) cache.set(key, { signature, row });
    rows.push(row);
  }
  return rows;
}

const ARCHIVED_JOURNAL = /^journal-.*\.jsonl$/;

/**
 * The runs of a folder as FileRuns.entries() finds them (its own run, its runs by id, the
 * archived ones of each), found with a directory read of runs/ and a stat or two a run: the
 * store of a run is made only when its journal is read, which a list does only for what changed.
 */
function folderEntries(root: string, runs: FileRuns): StoredRunEntry[] {
  const entries = runFolderEntries(root, null, () => new FileStore(root));
  for (const dirent of readDir(path.join(root, RUNS_DIR))) {
    if (dirent.isDirectory()) entries.push(...runFolderEntries(path.join(root, RUNS_DIR, dirent.name), dirent.name, () => runs.store(dirent.name)));
  }
  return entries;
}

function runFolderEntries(dir: string, folderId: string | null, store: () => FileStore): StoredRunEntry[] {
  const entries: StoredRunEntry[] = [];
  const journal = path.join(dir, JOURNAL_FILE);
  if (fs.existsSync(journal)) entries.push({ folderId, location: journal, archived: false, read: () => store().load({ fromLastSnapshot: true }) });
  for (const dirent of readDir(path.join(dir, 'archive'))) {
    if (!dirent.isFile() || !ARCHIVED_JOURNAL.test(dirent.name)) continue;
    const file = path.join(dir, 'archive', dirent.name);
    entries.push({
      folderId,
      location: file,
      archived: true,
      read: async () => {
        const read = readJournal(file, fs.readFileSync(file), { fromLastSnapshot: true });
        return { header: read.header, records: read.records, tornTail: null, totalBytes: read.goodLength };
      },
    });
  }
  return entries;
}

function readDir(dir: string): fs.Dirent[] {
  try {
    return fs.readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw error;
  }
}

async function folderRow(key: string, entry: StoredRunEntry, location: string, root: string, runs: FileRuns): Promise<ConsoleRow> {
  try {
    const loaded = await entry.read();
    const view = foldJournal(entry.location, loaded);
    const context = view.context;
    const store = entry.archived ? null : entry.folderId === null ? new FileStore(root) : runs.store(entry.folderId);
    const pause = store ? (await store.control.read()).find((request) => request.kind === 'pause') : undefined;
    const counted = typeof context.costUsd === 'number' ? context.costUsd : null;
    const model = loaded.header.startedBy?.model;
    return {
      key,
      source: 'folder',
      runId: loaded.header.runId,
      state: view.state,
      category: categoryOf(view.state, pause !== undefined),
      task: context.task,
      turn: context.turn,
      tokens: totalTokens(context.usage),
      costUsd: counted ?? (model ? estimateCost(model, context.usage) : null),
      updatedAt: loaded.records[loaded.records.length - 1]!.record.at,
      archived: entry.archived,
      problem: null,
      location,
      waitsFor: context.awaiting?.tool_use_id ?? null,
      pausedBy: pause?.by ?? null,
      worker: null,
      leaseEpoch: null,
    };
  } catch (error) {
    return {
      key,
      source: 'folder',
      runId: entry.folderId ?? path.basename(path.dirname(root)),
      state: null,
      category: 'unreadable',
      task: '',
      turn: 0,
      tokens: null,
      costUsd: null,
      updatedAt: null,
      archived: entry.archived,
      problem: (error as Error).message,
      location,
      waitsFor: null,
      pausedBy: null,
      worker: null,
      leaseEpoch: null,
    };
  }
}

async function fleetRows(pool: Pool): Promise<ConsoleRow[]> {
  const { listRuns } = await import('../fleet/run-queue.ts');
  return (await listRuns(pool)).map((run) => ({
    key: [FLEET, run.id].join(SEPARATOR),
    source: 'fleet',
    runId: run.id,
    state: run.state,
    category: categoryOf(run.state as AgentStateName, run.pausedBy !== null),
    task: run.spec.kind === 'agent' ? run.spec.task : DEMO_TASK,
    turn: run.turn,
    tokens: null,
    costUsd: null,
    updatedAt: Date.parse(run.updatedAt),
    archived: false,
    problem: null,
    location: 'the fleet (PostgreSQL)',
    waitsFor: run.awaiting ?? run.waitsForAgent,
    pausedBy: run.pausedBy,
    worker: run.leaseActive ? run.worker : null,
    leaseEpoch: run.leaseEpoch,
  }));
}

export function categoryOf(state: AgentStateName, paused: boolean): RunCategory {
  switch (state) {
    case 'done':
      return 'done';
    case 'failed':
      return 'failed';
    case 'cancelled':
      return 'cancelled';
    case 'stoppedAtMaxTurns':
    case 'stoppedAtBudget':
      return 'stopped';
    default:
      if (paused) return 'paused';
      return state === 'awaitingDecision' ? 'waiting' : 'running';
  }
}
