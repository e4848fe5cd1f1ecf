/**
 * Round trips per transition on PostgreSQL (issue 16): a fenced write answers, in the same
 * statement, whether it still held the lease, how long that lease has left and whether a control
 * request waits, so the checks at a step boundary that follow it cost no query; a write refused
 * for a lost lease writes nothing and says so in that one statement. Counted here by wrapping
 * pg's Client#query (each call is one round trip: pg sends one statement and waits for it).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fleetDemoTools } from '../../src/fleet/fleet-demo-tools.ts';
import { submitRuns } from '../../src/fleet/run-queue.ts';
import { scriptedDemoModel, Worker } from '../../src/fleet/worker.ts';
import { KeyRing } from '../../src/seal/keys.ts';
import { JOURNAL_FORMAT, JOURNAL_VERSION } from '../../src/store/journal/journal-record.ts';
import { claimNextRun, claimRun, type Lease, releaseLease, renewLease } from '../../src/store/pg/leases.ts';
import { ensureDemoTables } from '../../src/store/pg/demo-tables.ts';
import { LeaseLostError } from '../../src/store/pg/pg-errors.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { openDatabase, openPool } from '../../src/store/pg/pool.ts';
import { CONTROL_NOTE_MS } from '../../src/store/pg/write-notes.ts';
import { storeRecord } from '../helpers/journal-records.ts';
import { postgresAvailable, type PostgresServer, startPostgres } from '../helpers/postgres-server.ts';

let server: PostgresServer;
let admin: pg.Pool;
let databases = 0;
const HEADER = { format: JOURNAL_FORMAT, version: JOURNAL_VERSION, runId: 'x', createdAt: 1 } as const;
const SPEC = { kind: 'demo', model: null, maxTurns: 20, paceMs: 0, jitterMs: 0 } as const;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every statement sent by any pg client of this process, while counting. */
const sent: string[] = [];
let counting = false;
const clientQuery = pg.Client.prototype.query;

function countRoundTrips(): void {
  sent.length = 0;
  claimed.length = 0;
  counting = true;
}

/** How a claim statement begins, and how many runs each claim statement took while counting. */
const CLAIM = 'UPDATE da_runs SET lease_owner = $1';
const claimed: number[] = [];

/** Sends a claim and notes how many runs it took, whether pg was handed a callback or not. */
function countClaimed(client: pg.Client, args: unknown[]): unknown {
  const send = clientQuery as (...a: unknown[]) => unknown;
  const last = args.at(-1);
  if (typeof last === 'function') {
    const callback = last as (error: unknown, result?: pg.QueryResult) => void;
    return send.apply(client, [
      ...args.slice(0, -1),
      (error: unknown, result?: pg.QueryResult) => {
        if (!error && result) claimed.push(result.rowCount ?? 0);
        callback(error, result);
      },
    ]);
  }
  const answer = send.apply(client, args) as Promise<pg.QueryResult>;
  return answer.then((result) => {
    claimed.push(result.rowCount ?? 0);
    return result;
  });
}

function stopCounting(): string[] {
  counting = false;
  return [...sent];
}

async function freshDatabase(): Promise<{ url: string; pool: pg.Pool }> {
  const name = `trips_${++databases}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = server.url.replace(/\/postgres$/, `/${name}`);
  return { url, pool: await openDatabase(url, 8) };
}

async function heldRun(pool: pg.Pool, runId: string, leaseMs = 60_000): Promise<{ store: PgRunStore; lease: Lease }> {
  await pool.query('INSERT INTO da_runs (id, spec) VALUES ($1, $2)', [runId, JSON.stringify(SPEC)]);
  const lease = (await claimRun(pool, runId, 'worker-a', leaseMs))!;
  const store = new PgRunStore(pool, runId, { lease });
  await store.create({ ...HEADER, runId }, storeRecord(0));
  return { store, lease };
}

describe.skipIf(!postgresAvailable())('round trips per transition on PostgreSQL', () => {
  beforeAll(async () => {
    server = await startPostgres();
    admin = openPool(server.url, 2);
    (pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (this: pg.Client, ...args: unknown[]) {
      const text = args[0] as string | { text?: string } | undefined;
      const sql = text === undefined ? '' : (typeof text === 'string' ? text : (text.text ?? '')).replace(/\s+/g, ' ').trim();
      if (counting && text !== undefined) sent.push(sql);
      if (counting && sql.startsWith(CLAIM)) return countClaimed(this, args);
      return (clientQuery as (...a: unknown[]) => unknown).apply(this, args);
    };
  }, 60_000);
  afterEach(() => {
    counting = false;
  });
  afterAll(async () => {
    pg.Client.prototype.query = clientQuery;
    await admin?.end();
    server?.stop();
  });

  it("a worker driving 16 runs at once sends several runs' records to a statement, claims and releases them together", async () => {
    const { pool } = await freshDatabase();
    try {
      await submitRuns(pool, SPEC, 32);
      countRoundTrips();
      const worker = new Worker({ pool, runConcurrency: 16, leaseMs: 60_000, exitWhenIdle: true, pollIntervalMs: 50, log: () => {}, modelFor: async (spec) => scriptedDemoModel(spec) });
      await worker.run();
      const statements = stopCounting().filter((sql) => !/^(LISTEN|UNLISTEN) /.test(sql));
      const { rows } = await pool.query<{ n: number; done: number }>(`SELECT count(*)::int AS n, (SELECT count(*)::int FROM da_runs WHERE state = 'done') AS done FROM da_records`);
      expect(rows[0]!.done).toBe(32);
      // 32 runs of 15 records (480), one statement each before; their report writes (32) stay each its own.
      const shared = statements.filter((sql) => sql.startsWith('WITH input AS'));
      expect(shared.length).toBeGreaterThan(0);
      expect(statements.length / rows[0]!.n).toBeLessThanOrEqual(0.5);
      // The first claim fills all 16 slots in one statement; each later one takes what the slots
      // freed since (how many end together depends on the machine's pace, so no bound on that).
      expect(claimed.reduce((sum, n) => sum + n, 0)).toBe(32);
      expect(claimed[0]).toBe(16);
      expect(statements.filter((sql) => sql.startsWith(CLAIM)).length).toBe(claimed.length);
    } finally {
      await pool.end();
    }
  });

  it('a demo run on one worker costs at most 1.25 round trips per record, claim and release included', async () => {
    const { pool } = await freshDatabase();
    try {
      await submitRuns(pool, SPEC, 4);
      countRoundTrips();
      const worker = new Worker({ pool, concurrency: 1, leaseMs: 60_000, exitWhenIdle: true, pollMs: 50, log: () => {}, modelFor: async (spec) => scriptedDemoModel(spec) });
      await worker.run();
      const statements = stopCounting().filter((sql) => !/^(LISTEN|UNLISTEN) /.test(sql));
      const { rows } = await pool.query<{ n: number; done: number }>(`SELECT count(*)::int AS n, (SELECT count(*)::int FROM da_runs WHERE state = 'done') AS done FROM da_records`);
      expect(rows[0]!.done).toBe(4);
      // 4 runs of 15 records: 60 writes, 4 claims (and one that finds none), 4 releases, 4 report writes, one count.
      expect(statements.length / rows[0]!.n).toBeLessThanOrEqual(1.25);
      // Neither the lease nor the control inbox is asked apart at step boundaries; the spec comes with the claim.
      expect(statements.filter((sql) => /^SELECT kind, request FROM da_controls/.test(sql))).toEqual([]);
      expect(statements.filter((sql) => /^SELECT lease_epoch, lease_owner, records FROM da_runs/.test(sql))).toEqual([]);
      expect(statements.filter((sql) => /^SELECT (spec|records) FROM da_runs/.test(sql))).toEqual([]);
    } finally {
      await pool.end();
    }
  }, 120_000);

  it('an append after the lease was taken is refused by that one statement and writes nothing', async () => {
    const { pool } = await freshDatabase();
    try {
      const { store } = await heldRun(pool, 'taken', 200);
      await store.append(storeRecord(1));
      await sleep(300);
      const taker = await claimRun(pool, 'taken', 'worker-b', 60_000);
      expect(taker?.epoch).toBe(2);
      countRoundTrips();
      const error = await store.append(storeRecord(2)).catch((e: unknown) => e);
      expect(stopCounting()).toHaveLength(1);
      expect(error).toBeInstanceOf(LeaseLostError);
      expect(error).toMatchObject({ epoch: 1, currentEpoch: 2, currentOwner: 'worker-b' });
      const { rows } = await pool.query<{ seq: number }>(`SELECT seq FROM da_records WHERE run_id = 'taken' ORDER BY seq`);
      expect(rows.map((r) => r.seq)).toEqual([0, 1]);
      expect((await pool.query<{ records: number }>(`SELECT records FROM da_runs WHERE id = 'taken'`)).rows[0]!.records).toBe(2);
    } finally {
      await pool.end();
    }
  });

  it('right after a write, the lease check costs no query; once the lease may have run out, it asks and is refused', async () => {
    const { pool } = await freshDatabase();
    try {
      const { store } = await heldRun(pool, 'lapsing', 1_000);
      await store.append(storeRecord(1));
      countRoundTrips();
      await store.assertOwnership();
      expect(stopCounting()).toEqual([]);
      // As a worker frozen past its lease: the lease ran out and another took it.
      await sleep(1_100);
      expect(await claimRun(pool, 'lapsing', 'worker-b', 60_000)).not.toBeNull();
      countRoundTrips();
      await expect(store.assertOwnership()).rejects.toBeInstanceOf(LeaseLostError);
      expect(stopCounting()).toHaveLength(1);
    } finally {
      await pool.end();
    }
  });

  it('the control inbox is answered by the last write while fresh; a request the write saw is read at once', async () => {
    const { pool } = await freshDatabase();
    try {
      const { store } = await heldRun(pool, 'controlled');
      await store.append(storeRecord(1));
      countRoundTrips();
      expect(await store.control.read()).toEqual([]);
      expect(stopCounting()).toEqual([]);
      // Another process asks to cancel: the next write sees it, and the next look reads it.
      const other = new PgRunStore(pool, 'controlled');
      const request = { kind: 'cancel', by: 'ops', reason: 'enough', at: 1 } as const;
      expect(await other.control.write(request)).toBe('written');
      await store.append(storeRecord(2));
      expect(await store.control.read()).toEqual([request]);
      // A request written after the last write is seen once the note is older than CONTROL_NOTE_MS.
      await other.control.settle('cancel');
      await store.append(storeRecord(3));
      const pause = { kind: 'pause', by: 'ops', reason: null, at: 2 } as const;
      await other.control.write(pause);
      await sleep(CONTROL_NOTE_MS + 20);
      expect(await store.control.read()).toEqual([pause]);
    } finally {
      await pool.end();
    }
  });

  it('the claim brings the spec and the record count: the store knows the run is new without asking', async () => {
    const { pool } = await freshDatabase();
    try {
      await submitRuns(pool, SPEC, 1);
      const lease = (await claimNextRun(pool, 'worker-a', 60_000))!;
      expect(lease).toMatchObject({ records: 0, spec: SPEC });
      const store = new PgRunStore(pool, lease.runId, { lease });
      countRoundTrips();
      expect(await store.exists()).toBe(false);
      expect(await store.queued()).toBe(true);
      expect(stopCounting()).toEqual([]);
      await store.create({ ...HEADER, runId: lease.runId }, storeRecord(0));
      expect(await store.exists()).toBe(true);
    } finally {
      await pool.end();
    }
  });

  it("write_report is one fenced statement: under a lease that was taken it stores nothing and says whose it is", async () => {
    const { pool } = await freshDatabase();
    try {
      const { lease } = await heldRun(pool, 'reporting', 200);
      // The run was queued by hand, not by submitRuns: the demo's tables are made here as a demo submit makes them.
      await ensureDemoTables(pool);
      const writeReport = fleetDemoTools(pool, lease).find((tool) => tool.name === 'write_report')!;
      const ctx = { idempotencyKey: 'reporting:toolu_1', toolUseId: 'toolu_1', runId: 'reporting', signal: new AbortController().signal };
      countRoundTrips();
      await writeReport.run({ content: 'first' }, ctx as never);
      expect(stopCounting()).toHaveLength(1);
      await sleep(300);
      await claimRun(pool, 'reporting', 'worker-b', 60_000);
      const error = await Promise.resolve(writeReport.run({ content: 'second' }, { ...ctx, idempotencyKey: 'reporting:toolu_2', toolUseId: 'toolu_2' } as never)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LeaseLostError);
      expect(error).toMatchObject({ currentEpoch: 2, currentOwner: 'worker-b' });
      const audit = await pool.query<{ idempotency_key: string }>('SELECT idempotency_key FROM demo_report_audit');
      expect(audit.rows.map((r) => r.idempotency_key)).toEqual(['reporting:toolu_1']);
      expect((await pool.query('SELECT 1 FROM demo_reports')).rowCount).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it("a sealed run's load reads its run key with its row: the row and the records, two statements as for a plain run", async () => {
    const { pool } = await freshDatabase();
    try {
      const keys = KeyRing.of([{ id: 'trips', key: randomBytes(32) }]);
      await pool.query('INSERT INTO da_runs (id, spec) VALUES ($1, $2)', ['sealed', JSON.stringify(SPEC)]);
      const lease = (await claimRun(pool, 'sealed', 'worker-a', 60_000))!;
      const writer = new PgRunStore(pool, 'sealed', { lease, keys });
      await writer.create({ ...HEADER, runId: 'sealed' }, storeRecord(0));
      await writer.append(storeRecord(1));
      countRoundTrips();
      const loaded = await new PgRunStore(pool, 'sealed', { keys }).load();
      const statements = stopCounting();
      expect(loaded.header.sealed).toMatch(/^rk-/);
      expect(loaded.records.map((r) => r.record.seq)).toEqual([0, 1]);
      expect(statements).toHaveLength(2);
      expect(statements.filter((sql) => /^SELECT run_key FROM da_runs/.test(sql))).toEqual([]);
    } finally {
      await pool.end();
    }
  });

  it('a renewal that lands after the lease was released gives the run no expiry again (it stays claimable)', async () => {
    const { pool } = await freshDatabase();
    try {
      const { lease } = await heldRun(pool, 'released');
      await releaseLease(pool, lease);
      expect(await renewLease(pool, lease, 60_000)).toBe(false);
      const { rows } = await pool.query(`SELECT lease_owner, lease_expires_at FROM da_runs WHERE id = 'released'`);
      expect(rows[0]).toEqual({ lease_owner: null, lease_expires_at: null });
    } finally {
      await pool.end();
    }
  });
});
