/**
 * An inbox of a run in PostgreSQL, keyed: one row per (run_id, key), inserted whole in one
 * statement (the primary key makes a second entry for a key 'exists', nothing written). Rows
 * that are not whole entries (written by hand, or by a broken program) are left out. Decisions
 * and control requests differ only in how a row is settled, which is theirs.
 */
import type { Pool } from 'pg';

export interface PgInboxTable {
  readonly table: 'da_decisions' | 'da_controls';
  readonly keyColumn: 'tool_use_id' | 'kind';
  readonly entryColumn: 'decision' | 'request';
  /** A condition on the table's rows that are not settled yet (empty: every row). */
  readonly unsettled: string;
  /** Why the row's entry is not a whole one for its key, or null. */
  problem(entry: unknown, key: string): string | null;
}

export class PgKeyedInbox<T> {
  private readonly insertSql: string;
  private readonly selectSql: string;

  constructor(
    private readonly pool: Pool,
    private readonly runId: string,
    private readonly table: PgInboxTable,
    /** How an entry is kept and read back (a sealed run's decisions are sealed); as it is by default. */
    private readonly codec: { keep(entry: T): Promise<unknown>; read(kept: unknown): Promise<unknown> } = { keep: async (entry) => entry, read: async (kept) => kept },
  ) {
    const { table: name, keyColumn, entryColumn, unsettled } = table;
    this.insertSql = `INSERT INTO ${name} (run_id, ${keyColumn}, ${entryColumn}) VALUES ($1, $2, $3) ON CONFLICT (run_id, ${keyColumn}) DO NOTHING`;
    this.selectSql = `SELECT ${keyColumn} AS key, ${entryColumn} AS entry FROM ${name} WHERE run_id = $1${unsettled ? ` AND ${unsettled}` : ''}`;
  }

  async insert(key: string, entry: T): Promise<'written' | 'exists'> {
    const { rowCount } = await this.pool.query(this.insertSql, [this.runId, key, JSON.stringify(await this.codec.keep(entry))]);
    return rowCount === 1 ? 'written' : 'exists';
  }

  async entries(): Promise<T[]> {
    const { rows } = await this.pool.query<{ key: string; entry: unknown }>(this.selectSql, [this.runId]);
    const read = await Promise.all(rows.map(async (row) => ({ key: row.key, entry: await this.codec.read(row.entry) })));
    return read.filter((row) => this.table.problem(row.entry, row.key) === null).map((row) => row.entry as T);
  }
}
