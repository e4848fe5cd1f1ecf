/**
 * `forkRun`: a new run that starts from a parent's state at one of its records. The parent is
 * only read (no lock, no repair: a live parent reads as a consistent prefix) and never changed;
 * the child is written in one atomic create, so a crash leaves the whole child or none. The
 * fork runs nothing: the child's next resume goes on from its last record, and reconciles an
 * open turn as any resume would (the parent's ledger entries after the fork point are not
 * carried, so a side effect the parent did there is the child's unknown, never a silent reuse).
 * The same for any store: how the child is written is the store's (createForked: a file store
 * under its lock, the fleet's in one transaction with the run's row); a fork of a fleet run names
 * its parent's row (fleetRun).
 */
import path from 'node:path';
import type { AgentStateName } from '../../machines/agent-loop.types.ts';
import { checkMessageText } from '../core/continue-run.ts';
import type { ForkOrigin } from '../store/journal/journal-record.ts';
import { createForked } from '../store/fork-into.ts';
import { openStore, stateFolderOf } from '../store/open-store.ts';
import { type RunStore, requireContent } from '../store/store.ts';
import type { KeysGiven } from '../seal/keys.ts';
import { SealingUnsupportedError } from '../seal/seal-errors.ts';
import { ForkRefusedError } from './fork-errors.ts';
import { appendForkNote } from './fork-notes.ts';
import { type ParentCallAfterFork, planFork } from './fork-plan.ts';

export interface ForkOptions {
  /** The parent: a store, or the directory of a run (its state in DIR/.durable-agent). */
  from: RunStore | string;
  /** Where the child goes: a store, or a directory (it must hold no run). */
  to: RunStore | string;
  /** The parent's record to fork at (records are numbered from 0); default: its last resting point. */
  at?: number | undefined;
  /** Continue the finished conversation at `at` with this user message (only where the state is done). */
  message?: string | undefined;
  /** With message: the child's MAX_TURNS (a total), when the parent has no turn left. */
  maxTurns?: number | undefined;
  /**
   * The master keys (a ring, a KMS hook): a sealed parent is opened with them, and the child is
   * sealed under a run key of its own, wrapped by their sealing key (the first of a ring). Given
   * to the stores `from` and `to` (the stores of directories given, or stores given). Without
   * them a sealed parent is refused (KeyNotGivenError naming its key), nothing written.
   */
  keys?: KeysGiven | undefined;
}

export interface ForkResult {
  /** The child's run id. */
  runId: string;
  location: string;
  forkedFrom: ForkOrigin;
  /** The parent's last record at the time of the fork. */
  parentLastSeq: number;
  /** Where the child stands: a resume goes on from there. */
  state: AgentStateName;
  records: number;
  /** Calls open at the fork point: the child's resume settles them (ledger, re-run, verify or unknown). */
  openCalls: Array<{ id: string; name: string }>;
  /** What the parent did after the fork point that ran or may have: it happened, and is not undone. */
  afterFork: ParentCallAfterFork[];
  /** The parent's forks.jsonl line (file stores): null when written or not a file store, else why not. */
  lineageNoteProblem: string | null;
}

export async function forkRun(options: ForkOptions): Promise<ForkResult> {
  const from = storeOf(options.from);
  const to = storeOf(options.to);
  if (options.keys !== undefined) {
    for (const store of [from, to]) {
      if (!store.giveKeys) throw new SealingUnsupportedError(store.location);
      store.giveKeys(options.keys);
    }
  }
  if (options.message !== undefined) checkMessageText(from.location, options.message);
  if (sameStore(from, to)) throw new ForkRefusedError(from.location, 'same-run', `the fork would go where the run is: ${to.fleetRun !== undefined ? 'give another --to-run ID (or none for a new one)' : 'give another directory (--to DIR)'}. Nothing was written.`);
  if (!to.createFork && !to.createWith) throw new ForkRefusedError(from.location, 'target-cannot-fork', `the store ${to.location} cannot take a forked run (it has no createWith). Nothing was written.`);
  if (to.fleetRun !== undefined && from.fleetRun === undefined) {
    throw new ForkRefusedError(from.location, 'target-cannot-fork', `a fleet run takes its spec from the fleet run it is forked from: fork ${from.location} into a directory instead. Nothing was written.`);
  }
  // A sealed parent read without its key is refused here, naming the key: its sealed strings are never copied as content.
  const plan = planFork(from.location, requireContent(await from.load()), options, Date.now(), from.fleetRun);
  if ((await createForked(to, plan)) === 'exists') {
    throw new ForkRefusedError(
      from.location,
      'target-holds-run',
      to.fleetRun !== undefined
        ? `a fleet run ${to.fleetRun} already exists: give another --to-run ID (or none for a new one). Nothing was written.`
        : `${to.location} already holds a run: give a directory with none (--to NEWDIR), or move that run away first (a fresh start archives it). Nothing was written.`,
    );
  }
  const forkedFrom = plan.header.forkedFrom!;
  return {
    runId: plan.header.runId,
    location: to.location,
    forkedFrom,
    parentLastSeq: plan.lastSeq,
    state: plan.state,
    records: plan.records.length,
    openCalls: plan.openCalls.map((call) => ({ id: call.id, name: call.name })),
    afterFork: plan.afterFork,
    lineageNoteProblem: noteLineage(from, { parent: forkedFrom.runId, seq: forkedFrom.seq, child: { runId: plan.header.runId, location: to.location }, at: forkedFrom.at }),
  };
}

function noteLineage(from: RunStore, note: Parameters<typeof appendForkNote>[1]): string | null {
  if (from.dir === undefined) return null;
  try {
    appendForkNote(from.dir, note);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

function storeOf(given: RunStore | string): RunStore {
  return typeof given === 'string' ? openStore({ dir: stateFolderOf(path.resolve(given)) }) : given;
}

function sameStore(a: RunStore, b: RunStore): boolean {
  if (a === b || (a.fleetRun !== undefined && a.fleetRun === b.fleetRun)) return true;
  return a.journalPath !== undefined && b.journalPath !== undefined && path.resolve(a.journalPath) === path.resolve(b.journalPath);
}
