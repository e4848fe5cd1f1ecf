/**
 * npm run bench:fleet [-- --quick]
 *
 * The fleet on PostgreSQL: transitions (records) per second with 1, 8 and 32 runs at once, on
 * one worker and on three (real `durable-agent worker` processes driving the scripted demo, no
 * pacing), beside a raw floor measured in the same run: the same records INSERTed by as many
 * connections at once, each INSERT its own COMMIT with synchronous_commit = on, no logic. Then
 * the claim latency of a freed run: a run whose lease is released, taken up by an idle worker.
 * Starts its own temporary cluster (PostgreSQL binaries from /usr/lib/postgresql/<v>/bin, or
 * DURABLE_AGENT_PG_BIN). Prints the figures and writes them to bench/results/fleet.json.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { submitRuns, type RunSpec } from '../src/fleet/run-queue.ts';
import { openDatabase, openPool } from '../src/store/pg/pool.ts';
import { startPostgres } from '../test/helpers/postgres-server.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const BIN = path.join(REPO, 'bin', 'durable-agent.mjs');
const SPEC: RunSpec = { kind: 'demo', model: null, maxTurns: 20, paceMs: 0, jitterMs: 0 };
const POLL_MS = 50;

interface Config {
  runsAtOnce: number;
  workers: number;
}

interface Throughput extends Config {
  runs: number;
  records: number;
  /** Ours: from the first record's commit to the last's, by the server's clock. */
  seconds: number;
  perSecond: number;
  floorPerSecond: number;
  /** Our cost per transition ÷ the floor's: the floor's rate ÷ ours. */
  overFloor: number;
}

const log = (line: string) => process.stderr.write(`${line}\n`);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Splits `total` slots over `workers` workers as evenly as can be (each at least 1). */
function concurrencies(total: number, workers: number): number[] {
  return Array.from({ length: workers }, (_, i) => Math.floor(total / workers) + (i < total % workers ? 1 : 0));
}

function startWorker(url: string, concurrency: number, exitWhenIdle: boolean): { child: ChildProcess; done: Promise<number | null> } {
  const args = [BIN, 'worker', '--database-url', url, '--concurrency', String(concurrency), '--poll-ms', String(POLL_MS), ...(exitWhenIdle ? ['--exit-when-idle'] : [])];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  return { child, done: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
}

async function freshDatabase(admin: pg.Pool, baseUrl: string, name: string): Promise<string> {
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  const url = baseUrl.replace(/\/postgres$/, `/${name}`);
  await (await openDatabase(url, 2)).end();
  return url;
}

/** Our fleet: `runs` demo runs submitted at once, driven by workers whose slots add up to `runsAtOnce`. */
async function measureOurs(url: string, config: Config, runs: number): Promise<{ records: number; seconds: number; bodies: string[][] }> {
  const pool = openPool(url, 2);
  try {
    await submitRuns(pool, SPEC, runs);
    const workers = concurrencies(config.runsAtOnce, config.workers).map((c) => startWorker(url, c, true));
    const codes = await Promise.all(workers.map((w) => w.done));
    if (codes.some((code) => code !== 0)) throw new Error(`a worker exited with ${codes.join(', ')}`);
    const { rows } = await pool.query<{ n: string; seconds: number; unfinished: string }>(
      `SELECT count(*) AS n, extract(epoch FROM max(written_at) - min(written_at))::float8 AS seconds,
              (SELECT count(*) FROM da_runs WHERE NOT finished) AS unfinished FROM da_records`,
    );
    if (Number(rows[0]!.unfinished) !== 0) throw new Error(`${rows[0]!.unfinished} runs unfinished`);
    const bodies = await pool.query<{ run_id: string; body: string }>('SELECT run_id, body FROM da_records ORDER BY run_id, seq');
    const byRun = new Map<string, string[]>();
    for (const row of bodies.rows) byRun.set(row.run_id, [...(byRun.get(row.run_id) ?? []), row.body]);
    return { records: Number(rows[0]!.n), seconds: rows[0]!.seconds, bodies: [...byRun.values()] };
  } finally {
    await pool.end();
  }
}

/** The floor: the same records, `runsAtOnce` connections at once, each INSERT committed on its own, synchronous_commit on. */
async function measureFloor(url: string, runsAtOnce: number, bodies: string[][]): Promise<{ records: number; seconds: number }> {
  const pool = openPool(url, runsAtOnce);
  try {
    await pool.query('CREATE TABLE IF NOT EXISTS floor_records (LIKE da_records INCLUDING ALL)');
    await pool.query('TRUNCATE floor_records');
    const clients = await Promise.all(Array.from({ length: runsAtOnce }, () => pool.connect()));
    for (const client of clients) await client.query('SET synchronous_commit = on');
    let next = 0;
    const start = performance.now();
    await Promise.all(
      clients.map(async (client) => {
        for (let run = next++; run < bodies.length; run = next++) {
          const records = bodies[run]!;
          for (const [seq, body] of records.entries()) {
            await client.query('INSERT INTO floor_records (run_id, seq, epoch, body, bytes) VALUES ($1, $2, 1, $3, $4)', [`floor-${run}`, seq, body, Buffer.byteLength(body)]);
          }
        }
      }),
    );
    const seconds = (performance.now() - start) / 1000;
    for (const client of clients) client.release();
    return { records: bodies.reduce((sum, b) => sum + b.length, 0), seconds };
  } finally {
    await pool.end();
  }
}

/** A run whose lease is released (as a stopping worker leaves it), taken up by one of three idle workers. */
async function measureClaimLatency(url: string, samples: number): Promise<number[]> {
  const pool = openPool(url, 2);
  const workers = [1, 1, 1].map((c) => startWorker(url, c, false));
  const latencies: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      // Submitted with a lease that another worker held and released: claimable from this moment.
      const [id] = await submitRuns(pool, { ...SPEC, maxTurns: 1 }, 1);
      const freed = performance.now();
      for (;;) {
        const { rows } = await pool.query<{ owner: string | null }>('SELECT lease_owner AS owner FROM da_runs WHERE id = $1', [id]);
        if (rows[0]?.owner) break;
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      latencies.push(performance.now() - freed);
      // Let it finish, so that every worker is idle again before the next sample.
      for (;;) {
        const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM da_runs WHERE NOT finished');
        if (Number(rows[0]!.n) === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await new Promise((resolve) => setTimeout(resolve, Math.random() * POLL_MS));
    }
  } finally {
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.done));
    await pool.end();
  }
  return latencies;
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const started = Date.now();
  const loadAtStart = os.loadavg()[0]!;
  const server = await startPostgres();
  const admin = openPool(server.url, 2);
  const results: Throughput[] = [];
  let claim: number[] = [];
  let version = '?';
  try {
    version = (await admin.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version;
    const configs: Config[] = [];
    for (const runsAtOnce of [1, 8, 32]) for (const workers of [1, 3]) if (workers <= runsAtOnce) configs.push({ runsAtOnce, workers });
    for (const config of configs) {
      const runs = Math.max(quick ? 8 : 24, config.runsAtOnce * (quick ? 2 : 4));
      const url = await freshDatabase(admin, server.url, `bench_${config.runsAtOnce}_${config.workers}`);
      const ours = await measureOurs(url, config, runs);
      const floor = await measureFloor(url, config.runsAtOnce, ours.bodies);
      const perSecond = ours.records / ours.seconds;
      const floorPerSecond = floor.records / floor.seconds;
      results.push({ ...config, runs, records: ours.records, seconds: ours.seconds, perSecond, floorPerSecond, overFloor: floorPerSecond / perSecond });
      log(`  ${config.runsAtOnce} runs at once on ${config.workers} worker(s): ${perSecond.toFixed(0)} records/s, floor ${floorPerSecond.toFixed(0)}/s`);
    }
    const url = await freshDatabase(admin, server.url, 'bench_claim');
    claim = await measureClaimLatency(url, quick ? 5 : 15);
  } finally {
    await admin.end();
    server.stop();
  }
  const loadAtEnd = os.loadavg()[0]!;
  const lines = [
    `durable-agent bench:fleet${quick ? ' (quick)' : ''}: PostgreSQL ${version}, scripted demo runs (no pacing), workers as processes; ` +
      `node ${process.version}, ${os.cpus().length} cores; ${((Date.now() - started) / 1000).toFixed(0)} s; load average ${loadAtStart.toFixed(1)} at the start, ${loadAtEnd.toFixed(1)} at the end`,
    '',
    'Transitions (records) per second; floor: the same records INSERTed by as many connections at once, one COMMIT each, synchronous_commit = on:',
    'runs at once  workers  runs  records  ours/s  floor/s  PG cost per transition ÷ floor',
    '(one run at once on three workers is one run on one worker: not measured apart)',
    ...results.map(
      (r) =>
        `${String(r.runsAtOnce).padStart(12)}  ${String(r.workers).padStart(7)}  ${String(r.runs).padStart(4)}  ${String(r.records).padStart(7)}  ` +
        `${r.perSecond.toFixed(0).padStart(6)}  ${r.floorPerSecond.toFixed(0).padStart(7)}  ${`${r.overFloor.toFixed(2)}×`.padStart(30)}`,
    ),
    '',
    `Claim latency of a freed run (three idle workers polling every ${POLL_MS} ms; ${claim.length} runs): ` +
      `median ${median(claim).toFixed(1)} ms, max ${Math.max(...claim).toFixed(1)} ms`,
    '',
    `Target: PostgreSQL cost per transition ≤ 1.5× the floor at every concurrency: ` +
      `${results.every((r) => r.overFloor <= 1.5) ? 'met' : 'missed'} (${results.map((r) => `${r.runsAtOnce}×${r.workers}: ${r.overFloor.toFixed(2)}×`).join(', ')})`,
  ];
  console.log(lines.join('\n'));
  const file = fileURLToPath(new URL(`./results/${quick ? 'fleet-quick' : 'fleet'}.json`, import.meta.url));
  fs.writeFileSync(file, `${JSON.stringify({ generatedAt: new Date().toISOString(), machine: { node: process.version, cpus: os.cpus().length, loadAtStart, loadAtEnd }, pollMs: POLL_MS, throughput: results, claimLatencyMs: claim }, null, 2)}\n`);
  log(`figures written to ${path.relative(process.cwd(), file)}`);
}

await main();
