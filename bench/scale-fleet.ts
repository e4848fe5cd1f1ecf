/**
 * The fleet at scale: two databases of one throwaway cluster, one holding SMALL runs and one
 * holding `runs` (a million by default), each mostly finished, filled in SQL (generate_series)
 * from one real finished demo run whose row and records are copied under new ids, so filling
 * takes minutes, not a fleet's life. The same few runs stand out in both: 200 queued (the
 * claim's work) and 10 waiting for a person (what `list --state waiting` finds), so that each
 * operation has the same answer to give at both sizes and only the size of the tables differs.
 */
import type pg from 'pg';
import { listRuns } from '../src/fleet/list-runs.ts';
import { type DemoRunSpec, submitRuns } from '../src/fleet/run-queue.ts';
import { scriptedDemoModel, Worker } from '../src/fleet/worker.ts';
import { RunSources } from '../src/console/run-sources.ts';
import { readRunStatus } from '../src/runtime/run-status.ts';
import { claimNextRuns, releaseLeases } from '../src/store/pg/leases.ts';
import { openDatabaseStore } from '../src/store/pg/open-database-store.ts';
import { openDatabase } from '../src/store/pg/pool.ts';
import { startPostgres } from '../test/helpers/postgres-server.ts';
import { onExit } from './exit-cleanup.ts';
import { type Operation, timeInterleaved } from './scale-timing.ts';

export const SMALL = 1000;
/** Runs that wait in the queue, and runs that wait for a person: the same at every size. */
const QUEUED = 200;
const WAITING = 10;
const SPEC: DemoRunSpec = { kind: 'demo', model: null, maxTurns: 20, paceMs: 0, jitterMs: 0 };

/** One finished demo run, driven by a worker: the row and records every other run copies. */
async function templateRun(pool: pg.Pool): Promise<string> {
  const [id] = await submitRuns(pool, SPEC, 1);
  const worker = new Worker({ pool, concurrency: 1, leaseMs: 15_000, exitWhenIdle: true, pollMs: 50, log: () => {}, modelFor: async (spec) => scriptedDemoModel(spec) });
  await worker.run();
  return id!;
}

/**
 * `count` runs copied from the template: most finished (done, a few failed or cancelled), with
 * saves spread over the last 90 days, their records the template's; then the queued and the
 * waiting ones, saved before them all, so that the console's first page is the newest finished
 * runs at every size (the same work a page: each run's records read for what it spent). Ids are uuids made from the run's number, as submit makes uuids.
 */
async function fill(pool: pg.Pool, template: string, count: number): Promise<void> {
  const finished = count - QUEUED - WAITING;
  await pool.query(`CREATE TEMP TABLE template AS SELECT * FROM da_runs WHERE id = $1`, [template]);
  await pool.query(
    `INSERT INTO da_runs (id, spec, header, state, turn, records, finished, lease_epoch, snapshot_seq, created_at, updated_at)
     SELECT md5('run' || n)::uuid::text, t.spec, t.header,
            CASE WHEN n % 100 = 7 THEN 'failed' WHEN n % 100 = 13 THEN 'cancelled' ELSE 'done' END,
            t.turn, t.records, true, 1, t.snapshot_seq,
            now() - interval '90 days' + (n * interval '90 days' / $1::int),
            now() - interval '90 days' + (n * interval '90 days' / $1::int) + interval '1 minute'
       FROM template t, generate_series(1, $1::int) AS n`,
    [finished],
  );
  await pool.query(
    `INSERT INTO da_records (run_id, seq, epoch, body, bytes, written_at)
     SELECT md5('run' || n)::uuid::text, r.seq, r.epoch, r.body, r.bytes, r.written_at
       FROM da_records r, generate_series(1, $1::int) AS n WHERE r.run_id = $2`,
    [finished, template],
  );
  await pool.query(
    `INSERT INTO da_runs (id, spec, created_at, updated_at)
     SELECT md5('queued' || n)::uuid::text, t.spec, now() - interval '100 days' + n * interval '1 second', now() - interval '100 days' + n * interval '1 second'
       FROM template t, generate_series(1, $1::int) AS n`,
    [QUEUED],
  );
  await pool.query(
    `INSERT INTO da_runs (id, spec, header, state, turn, records, lease_epoch, awaiting, awaiting_since, created_at, updated_at)
     SELECT md5('waiting' || n)::uuid::text, t.spec, t.header, 'awaitingDecision', 1, t.records, 1, 'toolu_waiting_' || n, now(),
            now() - interval '99 days' + n * interval '1 second', now() - interval '99 days' + n * interval '1 second'
       FROM template t, generate_series(1, $1::int) AS n`,
    [WAITING],
  );
  await pool.query(
    `INSERT INTO da_records (run_id, seq, epoch, body, bytes, written_at)
     SELECT md5('waiting' || n)::uuid::text, r.seq, r.epoch, r.body, r.bytes, r.written_at
       FROM da_records r, generate_series(1, $1::int) AS n WHERE r.run_id = $2`,
    [WAITING, template],
  );
  await pool.query('DELETE FROM da_records WHERE run_id = $1', [template]);
  await pool.query('DELETE FROM da_runs WHERE id = $1', [template]);
  await pool.query('DROP TABLE template');
  await pool.query('VACUUM ANALYZE');
}

/** What is timed, on one database: each operation as a user or a worker makes it. */
function operations(pool: pg.Pool, someRun: string): Operation[] {
  return [
    {
      name: 'claim (and release)',
      run: async () => {
        const leases = await claimNextRuns(pool, 'bench', 60_000, 1);
        if (leases.length !== 1) throw new Error('nothing to claim');
        await releaseLeases(pool, leases);
      },
    },
    {
      name: 'submit one run',
      run: async () => {
        const [id] = await submitRuns(pool, SPEC, 1);
        // Taken out again: the queue stays as it was for the next operations.
        await pool.query('DELETE FROM da_runs WHERE id = $1', [id]);
      },
    },
    {
      name: 'status of one run',
      run: async () => {
        const status = await readRunStatus(openDatabaseStore(pool, someRun));
        if (status.state !== 'done') throw new Error(`run ${someRun} is ${status.state}`);
      },
    },
    {
      name: 'list --state waiting',
      run: async () => {
        const runs = await listRuns(pool, { states: ['awaitingDecision'] });
        if (runs.length !== WAITING) throw new Error(`${runs.length} runs wait, not ${WAITING}`);
      },
    },
    {
      name: "console's first page",
      run: async () => {
        const sources = new RunSources([], pool);
        try {
          const page = await sources.list({ limit: 100 });
          if (page.rows.length !== 100) throw new Error(`the first page has ${page.rows.length} rows`);
        } finally {
          await sources.close();
        }
      },
    },
  ];
}

export async function scaleFleet(runs: number, log: (line: string) => void): Promise<void> {
  const server = await startPostgres();
  const stop = onExit('the PostgreSQL cluster', () => server.stop());
  const pools: pg.Pool[] = [];
  try {
    const admin = await openDatabase(server.url, 2);
    pools.push(admin);
    const sizes = [SMALL, runs];
    const dbs: pg.Pool[] = [];
    for (const size of sizes) {
      await admin.query(`CREATE DATABASE scale_${size}`);
      const pool = await openDatabase(server.url.replace(/\/postgres$/, `/scale_${size}`), 4);
      pools.push(pool);
      const started = performance.now();
      await fill(pool, await templateRun(pool), size);
      log(`  filled ${size.toLocaleString('en')} runs in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      dbs.push(pool);
    }
    const someRun = (await dbs[0]!.query<{ id: string }>(`SELECT md5('run' || 500)::uuid::text AS id`)).rows[0]!.id;
    const results = await timeInterleaved(
      sizes,
      dbs.map((pool) => operations(pool, someRun)),
    );
    log(`The fleet (PostgreSQL), ${SMALL.toLocaleString('en')} runs against ${runs.toLocaleString('en')} (${QUEUED} queued and ${WAITING} waiting in both; medians):`);
    for (const line of results) log(line);
  } finally {
    for (const pool of pools.reverse()) await pool.end().catch(() => {});
    stop();
  }
}
