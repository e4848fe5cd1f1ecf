/**
 * A fleet run as a test reads it back: loaded (with the keys, for a sealed one) and folded, the
 * demo's audited side effects, and the whole database as a person reading it (or its dump) sees it.
 */
import { expect } from 'vitest';
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

/**
 * What a person would read in the database: every row of every da_ table as text. Each secret a
 * test looks for holds a space, which no sealed value (base64url) does, so none is found in one
 * by chance.
 */
export async function databaseText(db: Database): Promise<string> {
  const { rows: tables } = await db.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name LIKE 'da\\_%'");
  expect(tables.map((table) => table.table_name)).toEqual(expect.arrayContaining(['da_runs', 'da_records', 'da_schedules']));
  const texts: string[] = [];
  for (const { table_name } of tables) {
    const { rows } = await db.query<{ row: string }>(`SELECT t::text AS row FROM ${table_name} t`);
    texts.push(...rows.map((r) => r.row));
  }
  return texts.join('\n');
}
