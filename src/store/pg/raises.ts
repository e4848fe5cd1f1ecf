/**
 * The raises of da_controls (kind 'raise'): an operator's larger limits for a run stopped at one,
 * waiting for a worker to take the run up with them (WORKABLE in leases.ts lets it be claimed).
 * Whether a request is a whole raise, and whether it raises enough, is the fleet's to say
 * (src/fleet/raise-run.ts); here are only the statements.
 */
import type { Database } from './pool.ts';
import { inTransaction } from './transaction.ts';

/** The stored request of the run's raise, as it is (undefined: none). */
export async function readRaiseRequest(db: Database, runId: string): Promise<unknown> {
  const { rows } = await db.query<{ request: unknown }>(`SELECT request FROM da_controls WHERE run_id = $1 AND kind = 'raise'`, [runId]);
  return rows[0]?.request;
}

/** What came of an insert: written; a raise was there first; or the run was no longer where the request was worked out from. */
export type RaiseInsert = { outcome: 'inserted' } | { outcome: 'raised-already' } | { outcome: 'moved-on'; state: string | null };

/**
 * The request, in one transaction that holds the run's row: written only while the run still has
 * the records and state it was worked out from, and no raise is there already.
 */
export async function insertRaiseRequest(db: Database, runId: string, records: number, state: string, request: unknown): Promise<RaiseInsert> {
  return inTransaction(db, async (client) => {
    const { rows } = await client.query<{ records: number; state: string }>('SELECT records, state FROM da_runs WHERE id = $1 FOR UPDATE', [runId]);
    const row = rows[0];
    if (!row || row.records !== records || row.state !== state) return { outcome: 'moved-on', state: row?.state ?? null };
    const inserted = await client.query(`INSERT INTO da_controls (run_id, kind, request) VALUES ($1, 'raise', $2) ON CONFLICT (run_id, kind) DO NOTHING`, [runId, JSON.stringify(request)]);
    return inserted.rowCount === 1 ? { outcome: 'inserted' } : { outcome: 'raised-already' };
  });
}

/**
 * Deletes the run's raise under a lease (nothing when the lease was lost): the very request given
 * (a newer one stays), or whatever is there when `request` is null.
 */
export async function deleteRaiseUnderLease(db: Database, runId: string, epoch: number, request: unknown): Promise<void> {
  await db.query(
    `DELETE FROM da_controls c WHERE c.run_id = $1 AND c.kind = 'raise' AND ($3::jsonb IS NULL OR c.request = $3::jsonb)
        AND EXISTS (SELECT 1 FROM da_runs r WHERE r.id = $1 AND r.lease_epoch = $2)`,
    [runId, epoch, request === null ? null : JSON.stringify(request)],
  );
}
