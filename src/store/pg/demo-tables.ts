/**
 * The tables of the fleet's demo tools (src/fleet/fleet-demo-tools.ts), made by the demo itself
 * and not by the product's migration: where the report is stored under its idempotency key, and
 * one audit row per real execution, so anyone can count executions. Made IF NOT EXISTS, under an
 * advisory lock (workers starting together would race on CREATE), so that a database migrated by
 * an older version, which made them in schema 1, keeps them and their rows.
 */
import type { Database } from './pool.ts';

/** Several statements in one query run as one transaction: the lock holds until both tables are there, in one round trip. */
const DEMO_TABLES = `
  SELECT pg_advisory_xact_lock(hashtext('durable-agent demo tables'));
  CREATE TABLE IF NOT EXISTS demo_reports (
    idempotency_key text PRIMARY KEY,
    run_id          text NOT NULL,
    content         text NOT NULL,
    written_at      timestamptz NOT NULL DEFAULT now()
  );
  CREATE TABLE IF NOT EXISTS demo_report_audit (
    id              bigserial PRIMARY KEY,
    idempotency_key text NOT NULL,
    run_id          text NOT NULL,
    tool_use_id     text NOT NULL,
    worker          text NOT NULL,
    lease_epoch     bigint NOT NULL,
    at              timestamptz NOT NULL DEFAULT now()
  );
`;

/** Once per database handle: a demo run's tools ask before each statement, and only the first asks the database. */
const made = new WeakMap<Database, Promise<void>>();

/** Makes the demo's tables unless they are there; a failure is not remembered, so the next call tries again. */
export function ensureDemoTables(db: Database): Promise<void> {
  let making = made.get(db);
  if (!making) {
    making = db.query(DEMO_TABLES).then(() => {});
    made.set(db, making);
    making.catch(() => made.delete(db));
  }
  return making;
}
