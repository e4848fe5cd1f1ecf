/**
 * The fleet through PgBouncer in transaction pooling mode (Debian's pgbouncer, two server
 * connections for many clients): each transaction may run on another server connection, so a
 * statement prepared by name on one is missing on the next, and a LISTEN hears nothing. With
 * pgbouncer=true in the URL the schema migrates, runs are submitted, a worker claims and drives
 * them to the end, a caller awaits their result (looking again, since nobody can listen) and the
 * list shows them, all through the pooler.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awaitRun } from '../../src/fleet/await-run.ts';
import { listRuns } from '../../src/fleet/list-runs.ts';
import { submitRuns } from '../../src/fleet/run-queue.ts';
import { scriptedDemoModel, Worker } from '../../src/fleet/worker.ts';
import { ChannelSignal } from '../../src/store/pg/channel-signal.ts';
import { openDatabase, openPool } from '../../src/store/pg/pool.ts';
import { isThroughPooler, PoolerParameterError, poolerUrlOf } from '../../src/store/pg/pooler.ts';
import { type PgBouncerServer, pgbouncerAvailable, startPgBouncer } from '../helpers/pgbouncer-server.ts';
import { postgresAvailable, type PostgresServer, startPostgres } from '../helpers/postgres-server.ts';

const SPEC = { kind: 'demo', model: null, maxTurns: 20, paceMs: 0, jitterMs: 0 } as const;

describe('the pooler URL', () => {
  it('pgbouncer=true is taken off the URL and marks it as reaching the database through a pooler; anything else is left alone', () => {
    expect(poolerUrlOf('postgresql://da@db.example:6432/fleet?pgbouncer=true&sslmode=require')).toEqual({ url: 'postgresql://da@db.example:6432/fleet?sslmode=require', throughPooler: true });
    expect(poolerUrlOf('postgresql://da@db.example:6432/fleet?pgbouncer=false')).toEqual({ url: 'postgresql://da@db.example:6432/fleet', throughPooler: false });
    expect(poolerUrlOf('postgresql://da@db.example/fleet')).toEqual({ url: 'postgresql://da@db.example/fleet', throughPooler: false });
    expect(() => poolerUrlOf('postgresql://da@db.example/fleet?pgbouncer=yes')).toThrow(PoolerParameterError);
    expect(() => poolerUrlOf('postgresql://da@db.example/fleet?pgbouncer=yes')).toThrow(/pgbouncer=true/);
  });

  it('a pool opened on such a URL is known as one, and its signals do not listen (said once)', async () => {
    const pool = openPool('postgresql://da@127.0.0.1:1/nowhere?pgbouncer=true', 1);
    const lines: string[] = [];
    const signal = new ChannelSignal(pool, 'da_work', () => {}, (line) => lines.push(line), { what: 'new work', signalOnListen: true });
    try {
      expect(isThroughPooler(pool)).toBe(true);
      expect(isThroughPooler(openPool('postgresql://da@127.0.0.1:1/nowhere', 1))).toBe(false);
      await signal.ensure();
      await signal.ensure();
      expect(lines).toEqual(['not listening for new work: the database is reached through a pooler in transaction mode (pgbouncer=true); looking every poll interval']);
    } finally {
      await signal.stop();
      await pool.end();
    }
  });
});

describe.skipIf(!postgresAvailable() || !pgbouncerAvailable())('the fleet through PgBouncer in transaction pooling mode', () => {
  let server: PostgresServer;
  let bouncer: PgBouncerServer;
  let admin: pg.Pool;
  let databases = 0;

  beforeAll(async () => {
    server = await startPostgres();
    admin = openPool(server.url, 2);
    bouncer = await startPgBouncer(server.port, 2);
  }, 60_000);
  afterAll(async () => {
    await bouncer?.stop();
    await admin?.end();
    server?.stop();
  });

  async function pooledDatabase(): Promise<pg.Pool> {
    const name = `pooled_${++databases}`;
    await admin.query(`CREATE DATABASE ${name}`);
    // More clients than the pooler has server connections: transactions move between them.
    return openDatabase(bouncer.urlOf(name), 8);
  }

  it('runs submitted through the pooler are claimed, driven to the end and awaited, and listed', async () => {
    const pool = await pooledDatabase();
    const lines: string[] = [];
    const worker = new Worker({ pool, concurrency: 4, leaseMs: 30_000, exitWhenIdle: false, pollIntervalMs: 100, log: (line) => lines.push(line), modelFor: async (spec) => scriptedDemoModel(spec) });
    const done = worker.run();
    try {
      const ids = await submitRuns(pool, SPEC, 12);
      const results = await Promise.all(ids.map((id) => awaitRun(pool, id, { timeoutMs: 90_000 })));
      expect(results.map((result) => result.state)).toEqual(ids.map(() => 'done'));
      expect(results.every((result) => result.turn > 0 && result.text)).toBe(true);
      const listed = await listRuns(pool);
      expect(listed.filter((run) => ids.includes(run.runId)).map((run) => run.state)).toEqual(ids.map(() => 'done'));
      expect(lines.join('\n')).toContain('not listening for new work');
      expect(lines.join('\n'), 'no statement failed through the pooler').not.toMatch(/prepared statement|cannot claim|does not exist/);
      expect(bouncer.log()).not.toMatch(/prepared statement .* does not exist/);
    } finally {
      worker.stop('test over');
      await done;
      await pool.end();
    }
  }, 180_000);
});
