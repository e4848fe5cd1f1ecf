/**
 * npm run bench:fleet [-- --quick]
 *
 * The fleet on PostgreSQL: transitions (records) per second with 1, 8 and 32 runs at once, on
 * one worker and on three (real `durable-agent worker` processes driving the scripted demo, no
 * pacing), beside a raw floor measured in the same run: the same records INSERTed by as many
 * connections at once, each INSERT its own COMMIT, no logic. The floor commits each record as ours
 * does: with synchronous_commit = on where ours waits for the WAL flush, off for the two records
 * of a turn ours commits without waiting (the reply's usage; a turn's last outcome, whose close
 * right after flushes it). A second floor commits every record with synchronous_commit = on (the
 * issue's literal floor, more fsyncs than ours makes: it flatters us, so it is shown, not judged).
 * Round trips per transition are counted on a worker in this process (pg's Client#query calls).
 * Then the claim latency of a freed run: a run whose lease is released, taken up by an idle worker.
 * Starts its own temporary cluster (PostgreSQL binaries from /usr/lib/postgresql/<v>/bin, or
 * DURABLE_AGENT_PG_BIN), and takes it down, with the baseline's worktree and every worker, on
 * every way out (the end, a failure, SIGINT: exit-cleanup.ts). Prints the figures and writes them
 * to bench/results/fleet.json.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { submitRuns, type DemoRunSpec } from '../src/fleet/run-queue.ts';
import { scriptedDemoModel, Worker } from '../src/fleet/worker.ts';
import { releaseLease } from '../src/store/pg/leases.ts';
import { openDatabase, openPool } from '../src/store/pg/pool.ts';
import { startPostgres } from '../test/helpers/postgres-server.ts';
import { STOPPED_AT_LIMIT_STATES } from '../machines/agent-loop.types.ts';
import { onExit } from './exit-cleanup.ts';
import { type AgentThroughput, agentThroughputLines, baselineBuild, type Build, type BuildDatabase, DEFAULT_BASELINE, databaseOf, measureAgentRuns } from './fleet-agent-throughput.ts';
import { freshDatabase, POLL_MS, type StartedWorker, startWorkerOf } from './fleet-workers.ts';
import { describeCheckout } from './git-tree.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const SPEC: DemoRunSpec = { kind: 'demo', model: null, maxTurns: 20, paceMs: 0, jitterMs: 0 };
/** The claim latency is measured with the workers' default poll interval: what a fleet sees. */
const CLAIM_POLL_MS = 500;

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
  /** The floor with ours's commits (synchronous_commit as ours has it, record by record). */
  floorPerSecond: number;
  /** Our cost per transition ÷ the floor's: the floor's rate ÷ ours. */
  overFloor: number;
  /** The floor with every record's commit synchronous (the issue's literal floor). */
  allSyncFloorPerSecond: number;
  overAllSyncFloor: number;
  /** CPU seconds the worker processes used, all of them together (the machine is shared: wall time alone misleads). */
  workerCpuSeconds: number;
}

const log = (line: string) => process.stderr.write(`${line}\n`);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Splits `total` slots over `workers` workers as evenly as can be (each at least 1). */
function concurrencies(total: number, workers: number): number[] {
  return Array.from({ length: workers }, (_, i) => Math.floor(total / workers) + (i < total % workers ? 1 : 0));
}

function startWorker(url: string, concurrency: number, exitWhenIdle: boolean, pollMs = POLL_MS): StartedWorker {
  return startWorkerOf(REPO, url, concurrency, {}, ['--poll-interval', `${pollMs}ms`, ...(exitWhenIdle ? ['--exit-when-idle'] : [])]);
}

/**
 * Records each worker drives before the clock starts: a worker is a long-lived process, and a
 * fresh one spends its first few thousand records with V8 still compiling its hot code (about
 * twice the CPU per record; see the README). What is timed is the warm worker a fleet runs on.
 */
export const WARM_UP_RECORDS_PER_WORKER = 3000;

/**
 * Our fleet: workers whose slots add up to `runsAtOnce` are started and warmed up on runs of
 * their own, then `runs` demo runs are submitted at once and timed from their first record's
 * commit to their last's (by the server's clock); the workers' CPU is counted over that span.
 */
async function measureOurs(url: string, config: Config, runs: number): Promise<{ records: number; seconds: number; bodies: string[][]; cpuSeconds: number }> {
  const pool = openPool(url, 2);
  const workers = concurrencies(config.runsAtOnce, config.workers).map((c) => startWorker(url, c, false));
  try {
    await Promise.all(workers.map((w) => w.started));
    const recordsPerRun = 15;
    await submitRuns(pool, SPEC, Math.ceil((WARM_UP_RECORDS_PER_WORKER * config.workers) / recordsPerRun));
    await untilAllFinished(pool);
    const cpuBefore = workers.reduce((sum, w) => sum + w.cpuSeconds(), 0);
    const ids = await submitRuns(pool, SPEC, runs);
    await untilAllFinished(pool);
    // The sampler reads /proc every 50 ms: let it take one reading after the last commit.
    await new Promise((resolve) => setTimeout(resolve, 120));
    const cpuSeconds = workers.reduce((sum, w) => sum + w.cpuSeconds(), 0) - cpuBefore;
    const { rows } = await pool.query<{ n: string; seconds: number }>(
      `SELECT count(*) AS n, extract(epoch FROM max(written_at) - min(written_at))::float8 AS seconds FROM da_records WHERE run_id = ANY($1)`,
      [ids],
    );
    const bodies = await pool.query<{ run_id: string; body: string }>('SELECT run_id, body FROM da_records WHERE run_id = ANY($1) ORDER BY run_id, seq', [ids]);
    const byRun = new Map<string, string[]>();
    for (const row of bodies.rows) byRun.set(row.run_id, [...(byRun.get(row.run_id) ?? []), row.body]);
    if (byRun.size !== runs) throw new Error(`${runs} runs submitted, ${byRun.size} wrote records`);
    return { records: Number(rows[0]!.n), seconds: rows[0]!.seconds, bodies: [...byRun.values()], cpuSeconds };
  } finally {
    for (const w of workers) w.child.kill('SIGTERM');
    const codes = await Promise.all(workers.map((w) => w.done));
    await pool.end();
    // biome-ignore lint/correctness/noUnsafeFinally: a worker that failed to stop fails the bench, whether or not the measuring did
    if (codes.some((code) => code !== 0)) throw new Error(`a worker exited with ${codes.join(', ')} after SIGTERM`);
  }
}

/** Waits until every run of the database is finished or stopped at a limit (which a raise could take on, not a worker by itself). */
async function untilAllFinished(pool: pg.Pool): Promise<void> {
  for (;;) {
    const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM da_runs WHERE NOT finished AND NOT (state = ANY($1))', [[...STOPPED_AT_LIMIT_STATES]]);
    if (Number(rows[0]!.n) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Whether ours waits for the WAL flush when it commits this record (the driver's rule): not for a
 * reply's usage (MODEL_USAGE), nor for a turn's last outcome (the TOOL_RESULT right before CLOSE_TURN).
 */
function syncedAsOurs(records: readonly string[], index: number): boolean {
  const event = (body: string | undefined) => (body === undefined ? null : (JSON.parse(body) as { event: string }).event);
  const here = event(records[index]);
  if (here === 'MODEL_USAGE') return false;
  return !(here === 'TOOL_RESULT' && event(records[index + 1]) === 'CLOSE_TURN');
}

/**
 * The floor: the same records, `runsAtOnce` connections at once, each INSERT committed on its own;
 * `allSync`: every commit waits for the WAL flush, else each as ours (syncedAsOurs).
 */
async function measureFloor(url: string, runsAtOnce: number, bodies: string[][], allSync: boolean): Promise<{ records: number; seconds: number }> {
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
            const sync = allSync || syncedAsOurs(records, seq);
            // One statement, one transaction, its synchronous_commit set inside it, as ours does it.
            await client.query(
              `INSERT INTO floor_records (run_id, seq, epoch, body, bytes) SELECT $1, $2, 1, $3, $4 WHERE set_config('synchronous_commit', $5, true) IS NOT NULL`,
              [`floor-${run}`, seq, body, Buffer.byteLength(body), sync ? 'on' : 'off'],
            );
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

/**
 * A run whose lease is released (as a stopping worker leaves it), taken up by one of three idle
 * workers polling at the default interval: from the release's commit to the claim's. The workers
 * have started and taken one run each before the first sample (a cold start is not a claim).
 */
async function measureClaimLatency(url: string, samples: number): Promise<number[]> {
  const pool = openPool(url, 2);
  const workers = [1, 1, 1].map((c) => startWorker(url, c, false, CLAIM_POLL_MS));
  const latencies: number[] = [];
  const allFinished = () => untilAllFinished(pool);
  try {
    await Promise.all(workers.map((w) => w.started));
    await submitRuns(pool, { ...SPEC, maxTurns: 1 }, 3);
    await allFinished();
    for (let i = 0; i < samples; i++) {
      // Queued under a lease another worker holds for a minute, then released: claimable from that commit.
      const [id] = await submitRuns(pool, { ...SPEC, maxTurns: 1 }, 1);
      const { rows } = await pool.query<{ lease_epoch: string }>(
        `UPDATE da_runs SET lease_owner = 'bench-holder', lease_epoch = lease_epoch + 1, lease_expires_at = now() + interval '1 minute' WHERE id = $1 RETURNING lease_epoch`,
        [id],
      );
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 30));
      const freed = performance.now();
      await releaseLease(pool, { runId: id!, owner: 'bench-holder', epoch: Number(rows[0]!.lease_epoch) });
      for (;;) {
        const { rows: owner } = await pool.query<{ owner: string | null }>('SELECT lease_owner AS owner FROM da_runs WHERE id = $1', [id]);
        if (owner[0]?.owner) break;
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      latencies.push(performance.now() - freed);
      // Let it finish, so that every worker is idle again before the next sample.
      await allFinished();
    }
  } finally {
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.done));
    await pool.end();
  }
  return latencies;
}

/**
 * Round trips per transition: one worker in this process drives `runs` runs at `concurrency`;
 * every Client#query call is one round trip (pg sends one statement and waits for its answer).
 */
async function countRoundTrips(url: string, runs: number, concurrency: number): Promise<{ records: number; roundTrips: number; byStatement: Record<string, number> }> {
  const pool = await openDatabase(url, concurrency * 3 + 2);
  const byStatement: Record<string, number> = {};
  const query = pg.Client.prototype.query;
  try {
    await submitRuns(pool, SPEC, runs);
    (pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (this: pg.Client, ...args: unknown[]) {
      const text = args[0] as string | { text?: string } | undefined;
      if (text !== undefined) {
        const key = (typeof text === 'string' ? text : (text.text ?? '')).replace(/\s+/g, ' ').trim().slice(0, 60);
        byStatement[key] = (byStatement[key] ?? 0) + 1;
      }
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    };
    const worker = new Worker({ pool, concurrency, leaseMs: 15_000, exitWhenIdle: true, pollMs: POLL_MS, log: () => {}, modelFor: async (spec) => scriptedDemoModel(spec) });
    await worker.run();
    pg.Client.prototype.query = query;
    const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM da_records');
    return { records: rows[0]!.n, roundTrips: Object.values(byStatement).reduce((sum, n) => sum + n, 0), byStatement };
  } finally {
    pg.Client.prototype.query = query;
    await pool.end();
  }
}

/**
 * Records each worker drives before the agent runs are timed: more than the demo's, because a
 * fresh worker on this workload is still getting faster well past 3,000 records (measured: 180
 * µs of CPU a record over its first 7,800, 67 µs a record over the next 39,000). What is timed is
 * a long-lived worker's steady state, on both builds alike.
 */
const AGENT_WARM_UP_RECORDS_PER_WORKER = 8000;

/**
 * The user's agent on both builds, configuration by configuration, the rounds alternating. Each
 * build gets databases at its own schema, made and submitted to by its own code. A baseline that
 * cannot run a user's agent in a fleet (older than registered agents) is said so, not measured.
 */
async function agentSection(admin: pg.Pool, serverUrl: string, quick: boolean, baselineRev: string): Promise<{ results: AgentThroughput[]; lines: string[] }> {
  const ours: Build = { name: 'ours', repo: REPO, commit: describeCheckout(REPO) };
  const { build: baseline, remove } = baselineBuild(REPO, baselineRev, log);
  const runs = quick ? 60 : 200;
  const rounds = quick ? 1 : 2;
  const warmUpRuns = quick ? 20 : Math.ceil(AGENT_WARM_UP_RECORDS_PER_WORKER / 39);
  const best = new Map<string, AgentThroughput>();
  try {
    const databases = new Map<Build, BuildDatabase>();
    for (const build of [ours, baseline]) {
      const loaded = await databaseOf(build);
      if (!loaded.ok) {
        log(`  agent runs: not measured, ${loaded.missing}`);
        return { results: [], lines: [`A user's agent: not measured, ${loaded.missing} (it cannot run a user's agent in a fleet: give --baseline a later commit).`] };
      }
      databases.set(build, loaded.database);
    }
    for (const workers of [1, 2, 4]) {
      for (const webhooks of [false, true]) {
        for (let round = 0; round < rounds; round++) {
          for (const build of round % 2 === 0 ? [baseline, ours] : [ours, baseline]) {
            const database = databases.get(build)!;
            const url = await freshDatabase(admin, serverUrl, `agents_${build.name}_${workers}_${webhooks ? 'hooks' : 'plain'}`, database.migrate);
            const result = await measureAgentRuns(build, database, url, { workers, webhooks, runs, warmUpRuns }, (repo, u, c, env, extra) => startWorkerOf(repo, u, c, env, extra));
            log(`  agent runs, ${build.name}, ${workers} worker(s)${webhooks ? ', webhooks' : ''}, round ${round + 1}: ${result.recordsPerSecond.toFixed(0)} records/s, ${result.recordsPerCpuSecond.toFixed(0)} records per CPU s`);
            const key = `${build.name}:${workers}:${webhooks}`;
            const before = best.get(key);
            if (!before || result.recordsPerCpuSecond > before.recordsPerCpuSecond) best.set(key, result);
          }
        }
      }
    }
  } finally {
    remove();
  }
  const results = [...best.values()];
  return { results, lines: agentThroughputLines(results, { ours, baseline }, runs, rounds) };
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const agentsOnly = process.argv.includes('--agents-only');
  const baselineAt = process.argv.indexOf('--baseline');
  const baselineRev = baselineAt >= 0 ? process.argv[baselineAt + 1]! : DEFAULT_BASELINE;
  const started = Date.now();
  const loadAtStart = os.loadavg()[0]!;
  const server = await startPostgres();
  const stopServer = onExit('the PostgreSQL cluster', () => server.stop());
  const admin = openPool(server.url, 2);
  let agents: { results: AgentThroughput[]; lines: string[] } = { results: [], lines: [] };
  const results: Throughput[] = [];
  let claim: number[] = [];
  let trips = { records: 0, roundTrips: 0, byStatement: {} as Record<string, number> };
  let version = '?';
  try {
    version = (await admin.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version;
    agents = await agentSection(admin, server.url, quick, baselineRev);
    const configs: Config[] = [];
    if (!agentsOnly) for (const runsAtOnce of [1, 8, 32]) for (const workers of [1, 3]) if (workers <= runsAtOnce) configs.push({ runsAtOnce, workers });
    // Each configuration is measured `repeats` times, ours and both floors in turn, and the best of
    // each kept: on a shared machine a burst of other work can slow either side down.
    const repeats = quick ? 1 : 2;
    for (const config of configs) {
      const runs = Math.max(quick ? 8 : 24, config.runsAtOnce * (quick ? 2 : 4));
      let best: Throughput | null = null;
      for (let round = 0; round < repeats; round++) {
        const url = await freshDatabase(admin, server.url, `bench_${config.runsAtOnce}_${config.workers}`);
        const ours = await measureOurs(url, config, runs);
        const floor = await measureFloor(url, config.runsAtOnce, ours.bodies, false);
        const allSync = await measureFloor(url, config.runsAtOnce, ours.bodies, true);
        const perSecond = ours.records / ours.seconds;
        const floorPerSecond = Math.max(floor.records / floor.seconds, best?.floorPerSecond ?? 0);
        const allSyncFloorPerSecond = Math.max(allSync.records / allSync.seconds, best?.allSyncFloorPerSecond ?? 0);
        const oursBest: Pick<Throughput, 'records' | 'seconds' | 'perSecond' | 'workerCpuSeconds'> = best && best.perSecond > perSecond ? best : { records: ours.records, seconds: ours.seconds, perSecond, workerCpuSeconds: ours.cpuSeconds };
        best = {
          ...config,
          runs,
          records: oursBest.records,
          seconds: oursBest.seconds,
          perSecond: oursBest.perSecond,
          floorPerSecond,
          overFloor: floorPerSecond / oursBest.perSecond,
          allSyncFloorPerSecond,
          overAllSyncFloor: allSyncFloorPerSecond / oursBest.perSecond,
          workerCpuSeconds: oursBest.workerCpuSeconds,
        };
        log(`  ${config.runsAtOnce} runs at once on ${config.workers} worker(s), round ${round + 1}: ${perSecond.toFixed(0)} records/s, floor ${(floor.records / floor.seconds).toFixed(0)}/s (all synced ${(allSync.records / allSync.seconds).toFixed(0)}/s)`);
      }
      results.push(best!);
    }
    if (!agentsOnly) {
      trips = await countRoundTrips(await freshDatabase(admin, server.url, 'bench_trips'), quick ? 4 : 8, 1);
      claim = await measureClaimLatency(await freshDatabase(admin, server.url, 'bench_claim'), quick ? 5 : 15);
    }
  } finally {
    await admin.end();
    stopServer();
  }
  const loadAtEnd = os.loadavg()[0]!;
  const heading = `durable-agent bench:fleet${quick ? ' (quick)' : ''}: PostgreSQL ${version}, workers as processes; ` +
    `node ${process.version}, ${os.cpus().length} cores; ${((Date.now() - started) / 1000).toFixed(0)} s; load average ${loadAtStart.toFixed(1)} at the start, ${loadAtEnd.toFixed(1)} at the end`;
  const demoLines = agentsOnly ? [] : [
    'The scripted demo (no pacing):',
    `Transitions (records) per second, the best of ${quick ? 1 : 2} round(s) for ours and for each floor.`,
    'Floor: the same records INSERTed by as many connections at once, one statement and',
    'one COMMIT each, synchronous_commit as ours commits each record (on, but off for a reply\'s usage and a turn\'s last',
    'outcome, which the next synced commit flushes); "all synced": every COMMIT waits for the WAL flush (more fsyncs than ours).',
    `Warm workers: each started and drove ~${WARM_UP_RECORDS_PER_WORKER.toLocaleString('en-US')} records of runs of its own before the clock starts (a long-lived worker, not one still compiling).`,
    'Worker CPU: CPU seconds of all worker processes while they drove the timed runs, per 1,000 transitions (the machine is shared; wall time alone misleads).',
    'runs at once  workers  runs  records  ours/s  floor/s  ours ÷ floor  all synced/s  ours ÷ all synced  worker CPU s/1k',
    '(one run at once on three workers is one run on one worker: not measured apart)',
    ...results.map(
      (r) =>
        `${String(r.runsAtOnce).padStart(12)}  ${String(r.workers).padStart(7)}  ${String(r.runs).padStart(4)}  ${String(r.records).padStart(7)}  ` +
        `${r.perSecond.toFixed(0).padStart(6)}  ${r.floorPerSecond.toFixed(0).padStart(7)}  ${`${r.overFloor.toFixed(2)}×`.padStart(12)}  ` +
        `${r.allSyncFloorPerSecond.toFixed(0).padStart(12)}  ${`${r.overAllSyncFloor.toFixed(2)}×`.padStart(17)}  ${((r.workerCpuSeconds / r.records) * 1000).toFixed(2).padStart(15)}`,
    ),
    '',
    `Round trips per transition (one worker in this process, ${trips.records} records): ${(trips.roundTrips / Math.max(1, trips.records)).toFixed(2)} ` +
      `(the floor: 1.00), by statement: ${Object.entries(trips.byStatement)
        .sort((a, b) => b[1] - a[1])
        .map(([sql, n]) => `${n}× ${sql.slice(0, 40)}`)
        .join('; ')}`,
    '',
    `Claim latency of a freed run (a released lease, three idle workers LISTENing on da_work, polling every ${CLAIM_POLL_MS} ms; ${claim.length} runs): ` +
      `median ${median(claim).toFixed(1)} ms, max ${Math.max(...claim).toFixed(1)} ms`,
    '',
    `Target: PostgreSQL cost per transition ≤ 1.5× the floor at every concurrency: ` +
      `${results.every((r) => r.overFloor <= 1.5) ? 'met' : 'missed'} (${results.map((r) => `${r.runsAtOnce}×${r.workers}: ${r.overFloor.toFixed(2)}×`).join(', ')})`,
  ];
  console.log([heading, '', ...agents.lines, ...(agentsOnly ? [] : ['', ...demoLines])].join('\n'));
  const file = fileURLToPath(new URL(`./results/${quick || agentsOnly ? 'fleet-quick' : 'fleet'}.json`, import.meta.url));
  fs.writeFileSync(file, `${JSON.stringify({ generatedAt: new Date().toISOString(), machine: { node: process.version, cpus: os.cpus().length, loadAtStart, loadAtEnd }, pollMs: POLL_MS, claimPollMs: CLAIM_POLL_MS, agents: agents.results, throughput: results, roundTrips: trips, claimLatencyMs: claim }, null, 2)}\n`);
  log(`figures written to ${path.relative(process.cwd(), file)}`);
}

await main();
