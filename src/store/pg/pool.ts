/** Opening the database: one pool per process, that survives the server restarting. */
import type pg from 'pg';
import { loadPg } from './load-pg.ts';
import { markThroughPooler, poolerUrlOf, unnamedStatementClient } from './pooler.ts';
import { migrate } from './schema.ts';
export { databaseUrlOf, DatabaseUrlMissingError } from './database-url.ts';

/** The handle on the database that the fleet, the console and the CLI pass around: named here, so that only this folder imports pg. */
export type Database = pg.Pool;

/** Where a URL points, without its password, for messages. */
export function describeDatabase(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`;
  } catch {
    return 'the database';
  }
}

/** Loaded when durable-agent/postgres is imported: a missing pg is reported then, by name. */
const { Pool, Client } = loadPg();
/** pg's Client sending statements unnamed, for the pools that reach the database through a pooler. */
const UnnamedStatementClient = unnamedStatementClient(Client);

/** A pool on the database; a URL with pgbouncer=true reaches it through a pooler in transaction mode (pooler.ts). */
export function openPool(url: string, max = 10): Database {
  const target = poolerUrlOf(url);
  const pool = new Pool({ connectionString: target.url, max, connectionTimeoutMillis: 10_000, ...(target.throughPooler ? { Client: UnnamedStatementClient } : {}) });
  if (target.throughPooler) markThroughPooler(pool);
  // An idle connection dropped by a server restart must not bring the process down: the pool
  // opens a new one on the next query.
  pool.on('error', () => {});
  return pool;
}

/** Opens the pool and brings the schema up to date (first use migrates). */
export async function openDatabase(url: string, max = 10): Promise<Database> {
  const pool = openPool(url, max);
  try {
    await migrate(pool);
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
  return pool;
}
