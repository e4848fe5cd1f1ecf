/**
 * Pruning the fleet, in rows: which runs may go (resting in a final state, holding no live lease,
 * no raise waiting for them), and removing one with its records and decisions. Which of the
 * candidates go is the prune rule's (src/prune/prune-plan.ts, used by src/fleet/prune-fleet.ts).
 */
import { FINAL_STATES } from '../../../machines/agent-loop.types.ts';
import type { Database } from './pool.ts';
import { inTransaction } from './transaction.ts';

const FINISHED = `state = ANY($1::text[]) AND (lease_expires_at IS NULL OR lease_expires_at <= now())
  AND NOT EXISTS (SELECT 1 FROM da_controls c WHERE c.run_id = da_runs.id AND c.kind = 'raise')`;

/** A run that may be pruned, with what it holds; `now` is the server's clock, which ages are measured by. */
export interface PruneCandidateRow {
  id: string;
  state: string;
  finished_at: Date;
  now: Date;
  bytes: string;
  records: string;
  decisions: string;
}

/** Every run that may be pruned now, in one statement. */
export async function readPruneCandidates(db: Database): Promise<PruneCandidateRow[]> {
  const { rows } = await db.query<PruneCandidateRow>(
    `SELECT id, state, updated_at AS finished_at, now() AS now,
            (SELECT coalesce(sum(bytes), 0) FROM da_records r WHERE r.run_id = da_runs.id)
              + (SELECT coalesce(sum(octet_length(decision::text)), 0) FROM da_decisions d WHERE d.run_id = da_runs.id) AS bytes,
            (SELECT count(*) FROM da_records r WHERE r.run_id = da_runs.id) AS records,
            (SELECT count(*) FROM da_decisions d WHERE d.run_id = da_runs.id) AS decisions
       FROM da_runs WHERE ${FINISHED}`,
    [FINAL_STATES],
  );
  return rows;
}

/**
 * Removes one run, in one transaction that locks its row and checks again that it may go, so a
 * claim or a write racing the prune either happened before (the run is kept) or waits for the
 * delete and finds no run; false when it may no longer go (or is gone).
 */
export async function removeFinishedRun(db: Database, runId: string): Promise<boolean> {
  return inTransaction(db, async (client) => {
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

/**
 * Removes up to `batch` finished runs (done, failed, cancelled) whose last save is older than
 * `olderThanMs` by the server's clock (null: any age) and that are not among the `keep` newest
 * finished runs (null: none kept), oldest first, with their records and decisions, in one
 * short transaction: the batch's rows are locked (a row another transaction holds is passed
 * over, not waited for) and checked as removeFinishedRun checks one. The ids removed; fewer than
 * `batch` when no more are that old. Each batch commits on its own: a kill loses only the batch
 * it stopped in, and the next call goes on from there.
 */
export async function removeFinishedBatch(db: Database, rule: { olderThanMs: number | null; keep: number | null }, batch: number): Promise<string[]> {
  return inTransaction(db, async (client) => {
    const { rows } = await client.query<{ id: string }>(
      `SELECT id FROM da_runs
        WHERE finished AND ($2::bigint IS NULL OR updated_at < now() - $2 * interval '1 millisecond') AND ${FINISHED}
          AND ($4::int IS NULL OR id NOT IN (SELECT k.id FROM da_runs k WHERE k.finished ORDER BY k.updated_at DESC, k.id DESC LIMIT $4))
        ORDER BY updated_at, id
        LIMIT $3
        FOR UPDATE SKIP LOCKED`,
      [FINAL_STATES, rule.olderThanMs, batch, rule.keep],
    );
    const ids = rows.map((row) => row.id);
    if (ids.length === 0) return ids;
    await client.query('DELETE FROM da_decisions WHERE run_id = ANY($1::text[])', [ids]);
    await client.query('DELETE FROM da_records WHERE run_id = ANY($1::text[])', [ids]);
    await client.query('DELETE FROM da_runs WHERE id = ANY($1::text[])', [ids]);
    return ids;
  });
}
