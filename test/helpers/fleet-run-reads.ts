/** A fleet run as a test reads it back: loaded (with the keys, for a sealed one) and folded, and the demo's audited side effects. */
import type { KeyRing } from '../../src/seal/keys.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import type { Database } from '../../src/store/pg/pool.ts';

export async function loaded(db: Database, id: string, keys?: KeyRing) {
  const store = new PgRunStore(db, id, keys ? { keys } : {});
  const run = await store.load();
  return { run, view: foldJournal(id, run) };
}

/** How many times the demo's report was written for this run (once, whatever the kills). */
export async function audits(db: Database, id: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM demo_report_audit WHERE run_id = $1', [id]);
  return Number(rows[0]!.n);
}
