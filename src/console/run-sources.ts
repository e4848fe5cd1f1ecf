/**
 * The runs the console shows: every run of its folders (a folder's own run, its runs by id, its
 * archived runs) and, with a database, every run of the fleet. Each run has a key the page puts
 * in its address; the key names the folder by its place in the list given, never by its path,
 * so an address cannot reach a folder the console was not given.
 */
import path from 'node:path';
import type { Pool } from 'pg';
import type { AgentStateName } from '../../machines/agent-loop.types.ts';
import { totalTokens } from '../../machines/agent-loop.logic.ts';
import { DEMO_TASK } from '../demo/demo-task.ts';
import { estimateCost } from '../model/prices.ts';
import { FileRuns, RUNS_DIR } from '../store/file-runs.ts';
import { FileStore } from '../store/file-store.ts';
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
    for (const [index, root] of this.roots.entries()) rows.push(...(await folderRows(index, root)));
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

async function folderRows(index: number, root: string): Promise<ConsoleRow[]> {
  const runs = new FileRuns(root);
  const rows: ConsoleRow[] = [];
  for (const entry of runs.entries()) {
    const key = keyOf(index, entry.folderId, entry.archived ? entry.location : null);
    const location = entry.folderId === null ? path.dirname(root) : path.join(root, RUNS_DIR, entry.folderId);
    try {
      const loaded = await entry.read();
      const view = foldJournal(entry.location, loaded);
      const context = view.context;
      const store = entry.archived ? null : entry.folderId === null ? new FileStore(root) : runs.store(entry.folderId);
      const pause = store ? (await store.control.read()).find((request) => request.kind === 'pause') : undefined;
      const counted = typeof context.costUsd === 'number' ? context.costUsd : null;
      const model = loaded.header.startedBy?.model;
      rows.push({
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
      });
    } catch (error) {
      rows.push({
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
      });
    }
  }
  return rows;
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
