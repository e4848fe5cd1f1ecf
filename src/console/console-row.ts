/**
 * One row of the console's list of runs, the states it filters by, and the key a row's run is
 * found by: the key names a folder by its place in the list given, never by its path, so an
 * address cannot reach a folder the console was not given.
 */
import path from 'node:path';
import type { AgentStateName } from '../../machines/agent-loop.types.ts';

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
  /** Input, output and cache tokens together; null where they are not known (a fleet run that has not replied yet). */
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

export const KEY_SEPARATOR = '~';
export const FLEET_KEY = 'fleet';

export function keyOf(index: number, folderId: string | null, archivedJournal: string | null): string {
  return [String(index), folderId ?? '', archivedJournal ? path.basename(archivedJournal, '.jsonl') : ''].join(KEY_SEPARATOR);
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

/** Newest save first; rows saved at the same moment in the order of their keys. */
export function newestFirst(a: ConsoleRow, b: ConsoleRow): number {
  return (b.updatedAt ?? 0) - (a.updatedAt ?? 0) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}
