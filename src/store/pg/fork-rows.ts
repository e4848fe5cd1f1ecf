/**
 * Forking a fleet run, in rows: the new run's row (the parent's spec, the fork's header and
 * state) and its records, in one transaction, so a crash leaves the whole child or none. The
 * parent's rows are only read. What to fork is planned by src/fork/ (fork-plan.ts); the store writes it (PgRunStore.createFork).
 */
import type { Database } from './pool.ts';
import { inTransaction } from './transaction.ts';

export interface ForkedRunRows {
  /** The parent's id in da_runs: its spec is the child's. */
  parentRun: string;
  /** The child's id in da_runs. */
  toRun: string;
  header: unknown;
  state: string;
  turn: number;
  finished: boolean;
  /** The call the child waits on, and since when (epoch milliseconds); null: none. */
  awaiting: string | null;
  awaitingSince: number | null;
  /** The child's records, in order from seq 0, as stored. */
  bodies: readonly string[];
  /**
   * A sealed child's: its run key, wrapped, kept in its row with its records; and its spec made
   * from the parent's, read in the same transaction (its task sealed again under that key).
   */
  sealed?: { runKey: unknown; specOf: (parentSpec: Record<string, unknown>) => Promise<unknown> } | undefined;
}

/** Writes the child; false when a run of its id exists (nothing is written then). */
export async function insertForkedRun(db: Database, fork: ForkedRunRows): Promise<boolean> {
  return inTransaction(db, async (client) => {
    let spec: string | null = null;
    let runKey: string | null = null;
    if (fork.sealed) {
      // The parent's spec as it is now (a raise may have changed its limits since it was loaded).
      const { rows } = await client.query<{ spec: Record<string, unknown> }>('SELECT spec FROM da_runs WHERE id = $1', [fork.parentRun]);
      if (rows[0]) spec = JSON.stringify(await fork.sealed.specOf(rows[0].spec));
      runKey = JSON.stringify(fork.sealed.runKey);
    }
    const added = await client.query(
      `INSERT INTO da_runs (id, spec, header, state, turn, records, finished, awaiting, awaiting_since, run_key)
       SELECT $2, COALESCE($10::jsonb, spec), $3::jsonb, $4, $5, $6, $7, $8, to_timestamp($9::double precision / 1000), $11::jsonb FROM da_runs WHERE id = $1
       ON CONFLICT (id) DO NOTHING`,
      [fork.parentRun, fork.toRun, JSON.stringify(fork.header), fork.state, fork.turn, fork.bodies.length, fork.finished, fork.awaiting, fork.awaitingSince, spec, runKey],
    );
    if (added.rowCount !== 1) return false;
    await client.query(
      `INSERT INTO da_records (run_id, seq, epoch, body, bytes)
       SELECT $1, seq - 1, 0, body, octet_length(body) FROM unnest($2::text[]) WITH ORDINALITY AS r(body, seq)`,
      [fork.toRun, fork.bodies],
    );
    return true;
  });
}
