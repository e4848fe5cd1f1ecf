/**
 * A PostgreSQL test file's own server: `usePostgres()`, called in the file's
 * `describe.skipIf(!postgresAvailable())`, starts a fresh cluster (postgres-server.ts) before
 * its tests, with a pool on the `postgres` database, and ends both after them. Where PostgreSQL
 * is missing the describe is skipped, or fails under DURABLE_AGENT_REQUIRE_SYSTEM_TOOLS=1
 * (system-tools.ts), so these hooks never run without it.
 *
 * `server` and `pool` are live bindings, set once the cluster runs: every test file has its own
 * copy of this module (vitest isolates files), so two files never share a cluster.
 */
import type pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { openDatabase } from '../../src/store/pg/pool.ts';
import { type PostgresServer, startPostgres } from './postgres-server.ts';

export { postgresAvailable } from './postgres-server.ts';

export let server: PostgresServer;
export let pool: pg.Pool;

let prefix = 'db';
let databases = 0;

export interface UsePostgresOptions {
  /** The pool's size on the `postgres` database (default 4). */
  connections?: number | undefined;
  /** How freshDatabase() names the databases it makes: `<prefix>_1`, `<prefix>_2`, … */
  prefix?: string | undefined;
  /** false: the cluster's commits do not wait for the disk (see startPostgres); default true. */
  durableCommits?: boolean | undefined;
}

export function usePostgres(options: UsePostgresOptions = {}): void {
  prefix = options.prefix ?? prefix;
  beforeAll(async () => {
    server = await startPostgres({ durableCommits: options.durableCommits });
    pool = await openDatabase(server.url, options.connections ?? 4);
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    server?.stop();
  });
}

/** A new database of this file's cluster (so tests do not see each other's runs); its URL. */
export async function freshDatabase(name = `${prefix}_${++databases}`): Promise<string> {
  await pool.query(`CREATE DATABASE ${name}`);
  return server.url.replace(/\/postgres$/, `/${name}`);
}

/** `body` with a pool of its own on `url`, ended after it. */
export async function withDb<T>(url: string, body: (db: pg.Pool) => Promise<T>): Promise<T> {
  const db = await openDatabase(url, 3);
  try {
    return await body(db);
  } finally {
    await db.end();
  }
}
