/**
 * An inbox of a run in PostgreSQL, keyed: one row per (run_id, key), inserted whole in one
 * statement (the primary key makes a second entry for a key 'exists', nothing written). Rows
 * that are not whole entries (written by hand, or by a broken program) are left out. Decisions
 * and control requests differ only in how a row is settled, which is theirs.
 */
import type { Pool, PoolClient } from 'pg';
import { inTransaction } from './transaction.ts';

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
    /**
     * How an entry is kept and read back (a sealed run's decisions are sealed); as it is by default.
     * `keep` says whether it kept content plain that a sealed run seals (`plain`); `keepSealed`
     * keeps it for a run found sealed under its row's lock, or refuses it naming the key.
     */
    private readonly codec: PgInboxCodec<T> = { keep: async (entry) => ({ kept: entry, plain: false }), keepSealed: async (entry) => entry, read: async (kept) => kept },
  ) {
    const { table: name, keyColumn, entryColumn, unsettled } = table;
    this.insertSql = `INSERT INTO ${name} (run_id, ${keyColumn}, ${entryColumn}) VALUES ($1, $2, $3) ON CONFLICT (run_id, ${keyColumn}) DO NOTHING`;
    this.selectSql = `SELECT ${keyColumn} AS key, ${entryColumn} AS entry FROM ${name} WHERE run_id = $1${unsettled ? ` AND ${unsettled}` : ''}`;
  }

  async insert(key: string, entry: T): Promise<'written' | 'exists'> {
    const { kept, plain } = await this.codec.keep(entry);
    const insert = async (db: Pool | PoolClient, value: unknown) => (await db.query(this.insertSql, [this.runId, key, JSON.stringify(value)])).rowCount;
    const rowCount = plain
      ? await keptAsRunIs(this.pool, this.runId, async (client, runKey) => insert(client, runKey === null ? kept : await this.codec.keepSealed(entry, runKey)))
      : await insert(this.pool, kept);
    return rowCount === 1 ? 'written' : 'exists';
  }

  async entries(): Promise<T[]> {
    const { rows } = await this.pool.query<{ key: string; entry: unknown }>(this.selectSql, [this.runId]);
    const read = await Promise.all(rows.map(async (row) => ({ key: row.key, entry: await this.codec.read(row.entry) })));
    return read.filter((row) => this.table.problem(row.entry, row.key) === null).map((row) => row.entry as T);
  }
}

/** How an inbox keeps its entries (see PgKeyedInbox's constructor). */
export interface PgInboxCodec<T> {
  keep(entry: T): Promise<{ kept: unknown; plain: boolean }>;
  /** `runKey`: the wrap read from the run's row under its lock. */
  keepSealed(entry: T, runKey: unknown): Promise<unknown>;
  read(kept: unknown): Promise<unknown>;
}

/**
 * Writes an entry kept plain only as the run is when it goes in: with the run's row held shared,
 * its run key (the wrap, or null) is read and `write` given it, to seal with in the same
 * transaction (nothing else is read meanwhile: the pool may have no other connection to give). A sealing-in of the run (keys rotate
 * --seal-plain) holds the row for update while it seals the run's rows: an entry written before
 * it is there to be sealed, and one after it sees the run keyed and is sealed (or refused without
 * the key), so no plain entry lands in a run just sealed. A missing run is not locked: the insert
 * meets the foreign key as it would alone.
 */
export async function keptAsRunIs<R>(pool: Pool, runId: string, write: (client: PoolClient, runKey: unknown) => Promise<R>): Promise<R> {
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<{ run_key: unknown }>('SELECT run_key FROM da_runs WHERE id = $1 FOR SHARE', [runId]);
    return write(client, rows[0]?.run_key ?? null);
  });
}

/** Without a store's keys: a run sealed meanwhile is refused (a store always gives its own). */
export function noKeys(runId: string): (runKey: unknown) => Promise<never> {
  return async () => {
    throw new Error(`Run ${runId} was sealed while an entry was written for it, and no keys were given to seal it with.`);
  };
}
