/**
 * bench:fleet's first part: a user's agent (bench/fleet-agents.mjs: two tools, one side effect,
 * ten turns a run) in a fleet of real `durable-agent worker --agents` processes, on this build
 * and on a baseline build side by side, in the same run: runs per second and records per second
 * per worker CPU second at 1, 2 and 4 workers, with and without webhooks.
 *
 * The baseline is another commit of this repository (default: the main before several runs'
 * records went to one statement), checked out into a temporary worktree, built there and given
 * the same agents module. Each build has a database of its own at its own schema, made by its own
 * code (its migrations, its submit): an older worker refuses a newer schema, and a newer schema
 * is not what the older build ran on. Both sides drive the same workload on a fresh database each: the
 * workers are started and warmed up on runs of their own, then the timed runs are queued at
 * once (one transaction); the clock is the server's, from the timed runs' first commit to their last, and the CPU
 * is the worker processes' (utime + stime from /proc) over that span.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type pg from 'pg';
import { openPool } from '../src/store/pg/pool.ts';
import { checkoutTree } from './git-tree.ts';

/** The main before one statement carried several runs' records. */
export const DEFAULT_BASELINE = '6098bbc';
const AGENTS_MODULE = 'bench/fleet-agents.mjs';
export const RUN_CONCURRENCY = 16;
const WEBHOOK_SECRET = 'bench-secret-of-at-least-16-characters';

export interface AgentThroughput {
  build: 'ours' | 'baseline';
  workers: number;
  webhooks: boolean;
  runs: number;
  records: number;
  seconds: number;
  runsPerSecond: number;
  recordsPerSecond: number;
  workerCpuSeconds: number;
  /** The figure judged: records per CPU second of the workers. */
  recordsPerCpuSecond: number;
  /** Webhook requests the receiver took during the timed runs (with webhooks). */
  webhookRequests: number;
}

export interface Build {
  name: 'ours' | 'baseline';
  repo: string;
  commit: string;
}

/** A build's own code for its database: its migrations and its submit. */
export interface BuildDatabase {
  /** Brings the schema of the database at `url` to this build's version. */
  migrate(url: string): Promise<void>;
  submitRun(pool: pg.Pool | pg.PoolClient, options: { agent: string; task: string; runId: string; allowUnknownAgent: boolean; maxTurns: number }): Promise<unknown>;
}

/** The build's database code, loaded from its own source; or what it lacks, to run a user's agent in a fleet. */
export async function databaseOf(build: Build): Promise<{ ok: true; database: BuildDatabase } | { ok: false; missing: string }> {
  const load = async (file: string, name: string): Promise<unknown> => {
    const full = path.join(build.repo, file);
    if (!fs.existsSync(full)) return `${build.name} (${build.commit}) has no ${file}`;
    const value = ((await import(pathToFileURL(full).href)) as Record<string, unknown>)[name];
    return typeof value === 'function' ? value : `${build.name} (${build.commit})'s ${file} exports no ${name}`;
  };
  const openDatabase = await load('src/store/pg/pool.ts', 'openDatabase');
  const submitRun = await load('src/fleet/submit-run.ts', 'submitRun');
  if (typeof openDatabase === 'string') return { ok: false, missing: openDatabase };
  if (typeof submitRun === 'string') return { ok: false, missing: submitRun };
  const open = openDatabase as (url: string, max: number) => Promise<pg.Pool>;
  return {
    ok: true,
    database: {
      migrate: async (url) => (await open(url, 2)).end(),
      submitRun: submitRun as BuildDatabase['submitRun'],
    },
  };
}

interface WorkerProcess {
  stop(): Promise<number | null>;
  started: Promise<void>;
  cpuSeconds(): number;
}

type StartWorker = (repo: string, url: string, concurrency: number, env: Record<string, string>, extra: string[]) => WorkerProcess;

/**
 * Makes another commit's worktree at `dir` ready to run this workload: given this checkout's
 * agents module (the same workload on both sides) and built (its workers run its dist/).
 */
export function readyForAgentRuns(repo: string, dir: string): void {
  fs.copyFileSync(path.join(repo, AGENTS_MODULE), path.join(dir, AGENTS_MODULE));
  buildTree(dir);
}

/** `npm run build` in the tree at `dir`, by its own build script: its dist/, which its `durable-agent` command runs. */
export function buildTree(dir: string): void {
  execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], { cwd: dir, stdio: 'ignore' });
}

/** A worktree of `commit` with this checkout's node_modules, built; removed by the returned cleanup (and on any way out). */
export function baselineBuild(repo: string, commit: string, log: (line: string) => void): { build: Build; remove: () => void } {
  const tree = checkoutTree(repo, commit, 'da-baseline-');
  try {
    log(`baseline ${tree.commit}: building in ${tree.dir}`);
    readyForAgentRuns(repo, tree.dir);
  } catch (error) {
    tree.remove();
    throw error;
  }
  return { build: { name: 'baseline', repo: tree.dir, commit: tree.commit }, remove: tree.remove };
}

/** A receiver that answers every request at once, counting them. */
async function webhookReceiver(): Promise<{ url: string; count: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      requests += 1;
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/hook`, count: () => requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * Queues the runs in one transaction: the workers find them all waiting at once, as a fleet
 * finds a queue that built up. What is timed is the fleet draining it, not the pace of the
 * submitter (one at a time, each wakes the workers for a claim of its own).
 */
async function submitAll(database: BuildDatabase, pool: pg.Pool, prefix: string, runs: number): Promise<string[]> {
  const ids: string[] = [];
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    for (let i = 0; i < runs; i++) {
      const runId = `${prefix}-${i}`;
      // submitRun asks only with query(): a client inside a transaction does it as a pool would.
      await database.submitRun(client, { agent: 'shipping', task: `Handle order ${prefix.toUpperCase()}-${i}.`, runId, allowUnknownAgent: true, maxTurns: 20 });
      ids.push(runId);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
  return ids;
}

async function untilFinished(pool: pg.Pool, ids: readonly string[]): Promise<void> {
  for (;;) {
    const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM da_runs WHERE id = ANY($1) AND NOT finished', [ids]);
    if (Number(rows[0]!.n) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * One configuration on one build: `workers` processes of RUN_CONCURRENCY slots each, warmed up
 * on `warmUpRuns` runs each, then `runs` runs timed.
 */
export async function measureAgentRuns(
  build: Build,
  database: BuildDatabase,
  url: string,
  config: { workers: number; webhooks: boolean; runs: number; warmUpRuns: number },
  startWorker: StartWorker,
): Promise<AgentThroughput> {
  const pool = openPool(url, 2);
  const outbox = fs.mkdtempSync(path.join(os.tmpdir(), 'da-fleet-outbox-'));
  const receiver = config.webhooks ? await webhookReceiver() : null;
  const env = { FLEET_BENCH_OUTBOX: outbox, ...(receiver ? { DURABLE_AGENT_WEBHOOK_SECRET: WEBHOOK_SECRET } : {}) };
  const extra = ['--agents', path.join(build.repo, AGENTS_MODULE), ...(receiver ? ['--webhook-url', receiver.url] : [])];
  const workers = Array.from({ length: config.workers }, () => startWorker(build.repo, url, RUN_CONCURRENCY, env, extra));
  try {
    await Promise.all(workers.map((w) => w.started));
    await untilFinished(pool, await submitAll(database, pool, 'warm', config.warmUpRuns * config.workers));
    const cpuBefore = workers.reduce((sum, w) => sum + w.cpuSeconds(), 0);
    const requestsBefore = receiver?.count() ?? 0;
    const ids = await submitAll(database, pool, 'timed', config.runs);
    await untilFinished(pool, ids);
    // The CPU sampler reads /proc every 50 ms: let it take one reading after the last commit.
    await new Promise((resolve) => setTimeout(resolve, 120));
    const workerCpuSeconds = workers.reduce((sum, w) => sum + w.cpuSeconds(), 0) - cpuBefore;
    const { rows } = await pool.query<{ n: string; seconds: number; done: string }>(
      `SELECT count(*) AS n, extract(epoch FROM max(written_at) - min(written_at))::float8 AS seconds,
              (SELECT count(*) FROM da_runs WHERE id = ANY($1) AND state = 'done') AS done
         FROM da_records WHERE run_id = ANY($1)`,
      [ids],
    );
    const done = Number(rows[0]!.done);
    if (done !== config.runs) throw new Error(`${config.runs} runs timed on ${build.name}, ${done} done`);
    const records = Number(rows[0]!.n);
    const { seconds } = rows[0]!;
    return {
      build: build.name,
      workers: config.workers,
      webhooks: config.webhooks,
      runs: config.runs,
      records,
      seconds,
      runsPerSecond: config.runs / seconds,
      recordsPerSecond: records / seconds,
      workerCpuSeconds,
      recordsPerCpuSecond: records / workerCpuSeconds,
      webhookRequests: (receiver?.count() ?? 0) - requestsBefore,
    };
  } finally {
    const codes = await Promise.all(workers.map((w) => w.stop()));
    await receiver?.close();
    await pool.end();
    fs.rmSync(outbox, { recursive: true, force: true });
    // biome-ignore lint/correctness/noUnsafeFinally: a worker that failed to stop fails the bench, whether or not the measuring did
    if (codes.some((code) => code !== 0)) throw new Error(`a ${build.name} worker exited with ${codes.join(', ')} after SIGTERM`);
  }
}

/** The lines that print a table of both builds, and the ratio judged, configuration by configuration. */
export function agentThroughputLines(results: readonly AgentThroughput[], builds: { ours: Build; baseline: Build }, runs: number, rounds: number): string[] {
  const key = (r: Pick<AgentThroughput, 'workers' | 'webhooks'>) => `${r.workers}:${r.webhooks}`;
  const baseline = new Map(results.filter((r) => r.build === 'baseline').map((r) => [key(r), r]));
  const ours = results.filter((r) => r.build === 'ours');
  const ratios = ours.map((r) => ({ r, ratio: r.recordsPerCpuSecond / baseline.get(key(r))!.recordsPerCpuSecond }));
  const row = (r: AgentThroughput) =>
    `${String(r.workers).padStart(7)}  ${(r.webhooks ? 'on' : 'off').padStart(8)}  ${r.build.padEnd(8)}  ${String(r.records).padStart(7)}  ${r.runsPerSecond.toFixed(1).padStart(6)}  ${r.recordsPerSecond.toFixed(0).padStart(9)}  ${r.workerCpuSeconds.toFixed(2).padStart(7)}  ${r.recordsPerCpuSecond.toFixed(0).padStart(11)}`;
  return [
    `A user's agent (${AGENTS_MODULE}: two tools, one side effect, 10 turns a run): ${runs} runs queued at once, workers of ${RUN_CONCURRENCY} runs at once each, warmed up first;`,
    `ours (${builds.ours.commit}) beside the baseline (${builds.baseline.commit}, built from git in a worktree), the best of ${rounds} round(s) each, the rounds alternating.`,
    'records/CPU s: the timed runs\' records ÷ the CPU seconds of all worker processes while they drove them (the figure judged).',
    'workers  webhooks  build     records  runs/s  records/s   CPU s  records/CPU s',
    ...ours.flatMap((r) => [row(baseline.get(key(r))!), row(r), `${''.padStart(19)}ours ÷ baseline, records per CPU second: ${ratios.find((x) => x.r === r)!.ratio.toFixed(2)}×`]),
    '',
    `Target: records per worker CPU second ≥ 2× the baseline's at 1, 2 and 4 workers, with and without webhooks: ${ratios.every((x) => x.ratio >= 2) ? 'met' : 'missed'} ` +
      `(${ratios.map((x) => `${x.r.workers}${x.r.webhooks ? '+hooks' : ''}: ${x.ratio.toFixed(2)}×`).join(', ')})`,
  ];
}
