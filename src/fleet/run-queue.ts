/** The queue of runs in PostgreSQL: submitting runs and listing where they stand. */
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';

/** What a worker needs to drive a run: which task, which model, how paced. */
export interface RunSpec {
  kind: 'demo';
  /** A Claude model name; null for the scripted demo model. */
  model: string | null;
  maxTurns: number;
  paceMs: number;
  jitterMs: number;
}

export interface QueuedRun {
  id: string;
  state: string;
  turn: number;
  records: number;
  finished: boolean;
  spec: RunSpec;
  worker: string | null;
  leaseEpoch: number;
  leaseExpiresAt: string | null;
  leaseActive: boolean;
  createdAt: string;
  updatedAt: string;
}

export async function submitRuns(pool: Pool, spec: RunSpec, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  await pool.query(
    `INSERT INTO da_runs (id, spec, created_at)
     SELECT id, $2::jsonb, clock_timestamp() FROM unnest($1::text[]) AS id`,
    [ids, JSON.stringify(spec)],
  );
  return ids;
}

export async function listRuns(pool: Pool): Promise<QueuedRun[]> {
  const { rows } = await pool.query<{
    id: string;
    state: string;
    turn: number;
    records: number;
    finished: boolean;
    spec: RunSpec;
    lease_owner: string | null;
    lease_epoch: string;
    lease_expires_at: Date | null;
    lease_active: boolean;
    created_at: Date;
    updated_at: Date;
  }>(
    `SELECT id, state, turn, records, finished, spec, lease_owner, lease_epoch, lease_expires_at,
            coalesce(lease_expires_at > now(), false) AS lease_active, created_at, updated_at
       FROM da_runs WHERE id NOT LIKE '%~archived~%' ORDER BY created_at, id`,
  );
  return rows.map((row) => ({
    id: row.id,
    state: row.state,
    turn: row.turn,
    records: row.records,
    finished: row.finished,
    spec: row.spec,
    worker: row.lease_owner,
    leaseEpoch: Number(row.lease_epoch),
    leaseExpiresAt: row.lease_expires_at?.toISOString() ?? null,
    leaseActive: row.lease_active,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }));
}

export async function unfinishedRunCount(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM da_runs WHERE NOT finished');
  return Number(rows[0]?.n ?? 0);
}
