/**
 * What the fleet demo's write_report does to the outside world, in the demo's own tables
 * (demo-tables.ts): the report stored under the call's idempotency key, fenced by the run's lease.
 */
import type { Database } from './pool.ts';

export interface DemoReportWrite {
  idempotencyKey: string;
  runId: string;
  content: string;
  /** The lease it is written under: nothing is written once a newer lease exists. */
  owner: string;
  epoch: number;
  toolUseId: string;
}

/**
 * Stores the report (a repeat of the key does nothing) and appends one audit row, in one
 * statement, so one transaction, that locks the run's row under this lease; false: the lease was
 * not held, and nothing was written.
 */
export async function storeDemoReport(db: Database, write: DemoReportWrite): Promise<boolean> {
  const { rows } = await db.query<{ held: boolean }>(
    `WITH holder AS (
       SELECT id FROM da_runs WHERE id = $2 AND lease_epoch = $5 FOR UPDATE
     ), report AS (
       INSERT INTO demo_reports (idempotency_key, run_id, content) SELECT $1, $2, $3 FROM holder ON CONFLICT (idempotency_key) DO NOTHING
     ), audit AS (
       INSERT INTO demo_report_audit (idempotency_key, run_id, tool_use_id, worker, lease_epoch) SELECT $1, $2, $6, $4, $5 FROM holder
     )
     SELECT EXISTS (SELECT 1 FROM holder) AS held`,
    [write.idempotencyKey, write.runId, write.content, write.owner, write.epoch, write.toolUseId],
  );
  return rows[0]?.held === true;
}

/** The report stored under the key, or null: what the tool's verify checks after a kill. */
export async function storedDemoReport(db: Database, idempotencyKey: string): Promise<string | null> {
  const { rows } = await db.query<{ content: string }>('SELECT content FROM demo_reports WHERE idempotency_key = $1', [idempotencyKey]);
  return rows[0]?.content ?? null;
}
