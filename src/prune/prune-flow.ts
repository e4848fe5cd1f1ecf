/**
 * One prune, whatever holds the runs: the finished runs a source offers, the rule's choice among
 * them (selectForPruning), then each removed in turn, newest first. A run folder's archive
 * (prune-archive.ts) and a fleet's table of runs (src/fleet/prune-fleet.ts) are its two sources;
 * what only one of them has (the archive's leftovers and blobs, a fleet run taken up meanwhile)
 * stays with it.
 */
import { checkPruneOptions, type PruneCandidate, type PruneOptions, selectForPruning } from './prune-plan.ts';

export interface PruneSource<C extends PruneCandidate, Failure> {
  /** The finished runs that may go, and the clock their ages are measured by. */
  candidates(): Promise<{ candidates: C[]; now: number }>;
  /** Removes one run: 'removed'; 'skipped' when it is no longer finished (taken up meanwhile); else what failed. */
  remove(run: C): Promise<'removed' | 'skipped' | { failed: Failure }>;
}

export interface PruneOutcome<C extends PruneCandidate, Failure> {
  dryRun: boolean;
  /** Removed (or, with dryRun, would be), newest first. */
  removed: C[];
  totalBytes: number;
  skipped: C[];
  failed: Failure[];
}

export async function pruneFrom<C extends PruneCandidate, Failure>(source: PruneSource<C, Failure>, options: PruneOptions): Promise<PruneOutcome<C, Failure>> {
  checkPruneOptions(options);
  const dryRun = options.dryRun === true;
  const { candidates, now } = await source.candidates();
  const selected = selectForPruning(candidates, options, options.now ?? now);
  const outcome: PruneOutcome<C, Failure> = { dryRun, removed: [], totalBytes: 0, skipped: [], failed: [] };
  if (dryRun) outcome.removed = selected;
  else {
    for (const run of selected) {
      const removal = await source.remove(run);
      if (removal === 'removed') outcome.removed.push(run);
      else if (removal === 'skipped') outcome.skipped.push(run);
      else outcome.failed.push(removal.failed);
    }
  }
  outcome.totalBytes = outcome.removed.reduce((sum, run) => sum + run.bytes, 0);
  return outcome;
}
