/**
 * Where the API's runs live, as the routes need it: a folder of runs that serve drives itself, or
 * a fleet whose workers drive them. Each finds a run by its id (with its summary and tenant),
 * lists a page of them, starts one idempotently by id, and gives the console's handle on a run
 * (run-actions.ts decides, signals and controls through it).
 */
import type { RunSummary } from '../runtime/run-summary.ts';
import type { ConsoleRun } from '../console/run-sources.ts';
import type { RunCategory } from '../runtime/run-summary.ts';
import type { RunStore } from '../store/store.ts';

export interface FoundRun {
  summary: RunSummary;
  /** The store to read its journal and decide through; null for a fleet run queued and not yet started. */
  store: RunStore | null;
  /** The console's handle, for run-actions.ts. */
  handle: ConsoleRun | null;
}

export interface StartAsked {
  agent: string;
  task: string;
  runId: string;
  tenant: string | undefined;
}

export interface RunsPage {
  runs: RunSummary[];
  /** The place after the page's last run, when more may follow. */
  next: string | null;
}

export interface PageAsked {
  category: RunCategory | undefined;
  /** Only the runs of this tenant; undefined: every tenant's. */
  tenant: string | undefined;
  cursor: string | undefined;
  limit: number;
}

export interface RunPlace {
  readonly source: 'folder' | 'fleet';
  /** The run of this id, or null when there is none. */
  find(runId: string): Promise<FoundRun | null>;
  list(asked: PageAsked): Promise<RunsPage>;
  /** Starts the run, or finds the one started under its id (RunIdTakenError when it differs). */
  start(asked: StartAsked): Promise<{ created: boolean }>;
  /** A decision, answer, signal or unpause is in the run's inbox: a place that drives its runs makes sure this one is driven. */
  steered(runId: string): void;
  /**
   * The model's text as it streams (a run driven here, or a fleet's workers' through the
   * database); resolves once the listener hears, with what ends it.
   */
  followText(runId: string, listener: (text: string) => void): Promise<() => void>;
  /** How often a run's journal is looked at for new records. */
  readonly pollMs: number;
  close(): Promise<void>;
}
