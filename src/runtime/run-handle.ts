/**
 * openRun(): a run named once, by its directory or its store, and what a program does to it
 * from outside as methods of one handle, each with at most one options object. Each method hands
 * over to the function behind the CLI's command of the same name, so a handle reads, refuses and
 * fails exactly as that command does; opening one reads nothing.
 */
import type { Decision } from '../../machines/agent-loop.types.ts';
import { decide, type DecideInput, type DecideOptions } from '../awaits/decide.ts';
import type { ControlRequest } from '../control/control-request.ts';
import { type ForkOptions, type ForkResult, forkRun } from '../fork/fork-run.ts';
import { type PruneReport, pruneRuns } from '../prune/prune-archive.ts';
import type { PruneOptions } from '../prune/prune-plan.ts';
import { keptInFolder, type RunStore } from '../store/store.ts';
import { cancelRun, type ControlOptions, type ControlOutcome, pauseRun, runStoreOf, unpauseRun } from './cancel-run.ts';
import { type HistoryStep, readRunHistory, readRunStatus, type RunStatus } from './run-status.ts';
import { deciderOf, type TreePendingDecision, treePendingDecisions } from './tree-decisions.ts';

/**
 * Which run: `dir`, the directory it works in (its state in DIR/.durable-agent, the CLI's --dir),
 * or `store`, as startRun and resumeRun take it.
 */
export type OpenRunOptions = { dir: string; store?: never } | { store: RunStore; dir?: never };

export interface RunHandle {
  /** The run's store: the one given, or the file store in DIR/.durable-agent. */
  readonly store: RunStore;
  /** Where the run stands. Takes no lock, so it is safe while another process drives the run. */
  status(): Promise<RunStatus>;
  /** Every persisted step, oldest first (no lock either). */
  history(): Promise<HistoryStep[]>;
  /**
   * The calls that wait for a person's decision, in the order the run takes them up, then those
   * of the sub-agent runs under it (each with `run`, the id of the run that waits on it).
   */
  pending(): Promise<TreePendingDecision[]>;
  /**
   * Decides one waiting call, the run's own or one a sub-agent run under it waits on (the
   * decision goes to that run's inbox; TreeCallAmbiguousError when two wait on calls of that id);
   * `tools` (the run's) lets an approval edit the call's input, `now` is the clock. Refused with
   * DecisionRefusedError, nothing written, when it cannot be taken.
   */
  decide(input: DecideInput & DecideOptions): Promise<Decision>;
  /** Cancels the run: at once when no process drives it, else at that process's next step boundary. */
  cancel(options?: Omit<ControlOptions, 'store' | 'dir'>): Promise<ControlOutcome>;
  /** Pauses the run a process drives (refused when none does); a resume, or unpause(), clears it. */
  pause(options?: Pick<ControlOptions, 'by'>): Promise<ControlOutcome>;
  /** Clears a pause, and the pause it passed on to the sub-agent runs under it; the pause it cleared, or null when the run was not paused. */
  unpause(): Promise<ControlRequest | null>;
  /** A new run, in `to`, from this run's state at record `at` (default: its last resting point); this one is only read. */
  fork(options: Omit<ForkOptions, 'from'>): Promise<ForkResult>;
  /** Removes the finished runs archived beside this one that the options select (a file store's archive). */
  prune(options: PruneOptions): Promise<PruneReport>;
}

export function openRun(options: OpenRunOptions): RunHandle {
  const store = runStoreOf(options);
  return {
    store,
    status: () => readRunStatus(store),
    history: () => readRunHistory(store),
    pending: () => treePendingDecisions(store),
    decide: async ({ tools, now, ...decision }) => decide(await deciderOf(store, decision), decision, { tools, now }),
    cancel: (control = {}) => cancelRun({ ...control, store }),
    pause: (control = {}) => pauseRun({ ...control, store }),
    unpause: () => unpauseRun({ store }),
    fork: (fork) => forkRun({ ...fork, from: store }),
    prune: async (prune) => {
      // The archive is a file store's folder of runs moved aside; the fleet's finished runs are rows (pruneFleetRuns).
      if (!keptInFolder(store)) {
        throw new RangeError(`the store of ${store.location} keeps no archive of runs to prune: prune works on a file store (for a fleet's runs, pruneFleetRuns of durable-agent/postgres). Nothing was removed.`);
      }
      return pruneRuns(store, prune);
    },
  };
}

