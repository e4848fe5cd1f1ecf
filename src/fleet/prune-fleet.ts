/**
 * Pruning a fleet: removes finished runs from PostgreSQL with their records and decisions.
 * A candidate rests in a final state (done, failed, cancelled, or stopped at a limit: the same
 * states as a file store's prune; a row archived while unfinished is not in one, and stays) and
 * holds no lease that has not expired (a worker that died between the final record and its
 * release holds the run until the lease runs out). A run stopped at a limit could still go on:
 * it goes only when the rule says it is old enough, like any other, and never while a raise
 * waits for a worker to take it up. A queued, leased or waiting run is never a candidate.
 *
 * Each run goes in a transaction of its own that locks its row and checks all of the above
 * again, so a claim or a write racing the prune either happened before (the run is then kept)
 * or waits for the delete and finds no run. What the demo's tools wrote to the outside world
 * (demo_reports) is not the run's record and stays.
 */
import { pruneFrom } from '../prune/prune-flow.ts';
import { type PruneCandidate, type PruneOptions, PruneRuleMissingError } from '../prune/prune-plan.ts';
import type { Database } from '../store/pg/pool.ts';
import { readPruneCandidates, removeFinishedBatch, removeFinishedRun } from '../store/pg/prune-rows.ts';

export interface PrunedFleetRun extends PruneCandidate {
  records: number;
  decisions: number;
}

export interface FleetPruneReport {
  dryRun: boolean;
  /** Removed (or, with dryRun, would be), newest first. */
  removed: PrunedFleetRun[];
  totalBytes: number;
  /** Selected but no longer finished when its turn came (taken up meanwhile): left alone. */
  skipped: string[];
}

/** Removes the finished runs of the fleet that the options select (see selectForPruning); ages by the server's clock. */
export async function pruneFleetRuns(pool: Database, options: PruneOptions): Promise<FleetPruneReport> {
  const outcome = await pruneFrom<PrunedFleetRun, never>(
    {
      async candidates() {
        const rows = await readPruneCandidates(pool);
        const candidates = rows.map((row) => ({
          id: row.id,
          state: row.state,
          finishedAt: row.finished_at.getTime(),
          bytes: Number(row.bytes),
          records: Number(row.records),
          decisions: Number(row.decisions),
        }));
        return { candidates, now: rows[0]?.now.getTime() ?? Date.now() };
      },
      remove: async (run) => ((await removeFinishedRun(pool, run.id)) ? 'removed' : 'skipped'),
    },
    // The server's clock, not the options': the ages are the database's.
    { ...options, now: undefined },
  );
  return { dryRun: outcome.dryRun, removed: outcome.removed, totalBytes: outcome.totalBytes, skipped: outcome.skipped.map((run) => run.id) };
}

/** How many runs a batch of pruneFleetInBatches removes by default: a transaction of a fraction of a second. */
export const PRUNE_BATCH = 500;

/**
 * Retention for a large fleet: removes every finished run (done, failed, cancelled) whose last
 * save is older than `olderThanMs` (null: any age) and that is not among the `keep` newest
 * (null: none kept; with both, a run goes only if both say so), oldest first, `batch` runs to a transaction, so that no lock
 * is held for long and a fleet at work goes on between two batches; `onBatch` hears of each.
 * Killed, it has removed whole batches only: run again, it goes on where it stopped. Runs stopped
 * at a limit stay (pruneFleetRuns weighs them): they could still go on. The number removed.
 */
export async function pruneFleetInBatches(
  pool: Database,
  rule: { olderThanMs?: number | null; keep?: number | null },
  options: { batch?: number; onBatch?: (ids: readonly string[]) => void } = {},
): Promise<number> {
  if ((rule.olderThanMs ?? null) === null && (rule.keep ?? null) === null) throw new PruneRuleMissingError();
  const batch = options.batch ?? PRUNE_BATCH;
  let removed = 0;
  for (;;) {
    const ids = await removeFinishedBatch(pool, { olderThanMs: rule.olderThanMs ?? null, keep: rule.keep ?? null }, batch);
    removed += ids.length;
    if (ids.length) options.onBatch?.(ids);
    if (ids.length < batch) return removed;
  }
}
