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
import type { Pool } from 'pg';
import { FINAL_STATES } from '../../machines/agent-loop.types.ts';
import { checkPruneOptions, type PruneCandidate, type PruneOptions, selectForPruning } from '../prune/prune-plan.ts';
import { inTransaction } from '../store/pg/transaction.ts';

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

const FINISHED = `state = ANY($1::text[]) AND (lease_expires_at IS NULL OR lease_expires_at <= now())
  AND NOT EXISTS (SELECT 1 FROM da_controls c WHERE c.run_id = da_runs.id AND c.kind = 'raise')`;

/** Removes the finished runs of the fleet that the options select (see selectForPruning); ages by the server's clock. */
export async function pruneFleetRuns(pool: Pool, options: PruneOptions): Promise<FleetPruneReport> {
  checkPruneOptions(options);
  const dryRun = options.dryRun === true;
  const { rows } = await pool.query<{ id: string; state: string; finished_at: Date; now: Date; bytes: string; records: string; decisions: string }>(
    `SELECT id, state, updated_at AS finished_at, now() AS now,
            (SELECT coalesce(sum(bytes), 0) FROM da_records r WHERE r.run_id = da_runs.id)
              + (SELECT coalesce(sum(octet_length(decision::text)), 0) FROM da_decisions d WHERE d.run_id = da_runs.id) AS bytes,
            (SELECT count(*) FROM da_records r WHERE r.run_id = da_runs.id) AS records,
            (SELECT count(*) FROM da_decisions d WHERE d.run_id = da_runs.id) AS decisions
       FROM da_runs WHERE ${FINISHED}`,
    [FINAL_STATES],
  );
  const now = rows[0]?.now.getTime() ?? Date.now();
  const candidates: PrunedFleetRun[] = rows.map((row) => ({
    id: row.id,
    state: row.state,
    finishedAt: row.finished_at.getTime(),
    bytes: Number(row.bytes),
    records: Number(row.records),
    decisions: Number(row.decisions),
  }));
  const selected = selectForPruning(candidates, options, now);
  const report: FleetPruneReport = { dryRun, removed: [], totalBytes: 0, skipped: [] };
  if (dryRun) {
    report.removed = selected;
  } else {
    for (const run of selected) {
      if (await removeRun(pool, run.id)) report.removed.push(run);
      else report.skipped.push(run.id);
    }
  }
  report.totalBytes = report.removed.reduce((sum, run) => sum + run.bytes, 0);
  return report;
}

/** One run, in one transaction: false when it is no longer finished (or gone) once its row is locked. */
async function removeRun(pool: Pool, runId: string): Promise<boolean> {
  return inTransaction(pool, async (client) => {
    const { rowCount } = await client.query(`SELECT 1 FROM da_runs WHERE id = $2 AND ${FINISHED} FOR UPDATE`, [FINAL_STATES, runId]);
    // A raise committed while this waited for the row is not in that statement's snapshot: asked again, now the row is held.
    const raised = rowCount === 1 && (await client.query(`SELECT 1 FROM da_controls WHERE run_id = $1 AND kind = 'raise'`, [runId])).rowCount !== 0;
    // Nothing was written: the commit that ends the transaction only lets the row go.
    if (rowCount !== 1 || raised) return false;
    await client.query('DELETE FROM da_decisions WHERE run_id = $1', [runId]);
    await client.query('DELETE FROM da_records WHERE run_id = $1', [runId]);
    await client.query('DELETE FROM da_runs WHERE id = $1', [runId]);
    return true;
  });
}
