/**
 * The fleet benches' PostgreSQL parts outside this process: `durable-agent worker` processes of
 * a build (this checkout or another commit's worktree), their CPU read from /proc, and a fresh
 * database on the bench's cluster at the schema of the build that will use it. Used by
 * bench:fleet and by bench:compare's fleet benchmark.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { openDatabase } from '../src/store/pg/pool.ts';
import { onExit } from './exit-cleanup.ts';

/** How often an idle worker polls (its default is longer): a bench's runs are taken up at once. */
export const POLL_MS = 50;

export interface StartedWorker {
  child: ChildProcess;
  done: Promise<number | null>;
  /** Resolves once the worker has logged that it started. */
  started: Promise<void>;
  /** CPU seconds used so far (read from /proc while it lives; its last reading once it exited). */
  cpuSeconds: () => number;
  /** SIGTERM, and its exit code. */
  stop: () => Promise<number | null>;
}

const TICKS_PER_SECOND = 100;
/** Extra node flags for the worker processes, e.g. FLEET_BENCH_WORKER_NODE_ARGS='--cpu-prof --cpu-prof-dir=.prof' (not allowed in NODE_OPTIONS). */
const WORKER_NODE_ARGS = (process.env.FLEET_BENCH_WORKER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);

/** utime + stime of a live process, in seconds; null once it is gone (or where /proc is not). */
function cpuOf(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

export class WorkerStartError extends Error {
  override readonly name = 'WorkerStartError';
  constructor(
    readonly repo: string,
    readonly code: number | null,
    readonly signal: string | null,
  ) {
    super(`the worker of ${repo} exited (${signal ?? `code ${code}`}) before it started: its own message is above`);
  }
}

/** A worker process of the build in `repo`, with `extra` arguments and `env` over this one's. */
export function startWorkerOf(repo: string, url: string, concurrency: number, env: Record<string, string>, extra: string[]): StartedWorker {
  const args = [path.join(repo, 'bin', 'durable-agent.mjs'), 'worker', '--database-url', url, '--run-concurrency', String(concurrency), ...(extra.includes('--poll-interval') ? [] : ['--poll-interval', `${POLL_MS}ms`]), ...extra];
  const child = spawn(process.execPath, [...WORKER_NODE_ARGS, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  // Killed with the bench, whichever way it ends: a worker left behind would hold the cluster open.
  const forget = onExit(`worker ${child.pid}`, () => child.kill('SIGKILL'));
  let cpu = 0;
  const sampler = setInterval(() => (cpu = cpuOf(child.pid!) ?? cpu), 50);
  const done = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      clearInterval(sampler);
      forget();
      resolve(code);
    }),
  );
  // A worker that refuses to start (a schema it does not know, an option it lacks) fails the bench instead of leaving it waiting.
  const started = new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('] started:')) resolve();
    });
    child.on('exit', (code, signal) => reject(new WorkerStartError(repo, code, signal)));
  });
  started.catch(() => {});
  return { child, done, started, cpuSeconds: () => cpu, stop: () => (child.kill('SIGTERM'), done) };
}

/** A new database `name`, its schema made by `migrate` (default: this build's migrations). */
export async function freshDatabase(admin: pg.Pool, baseUrl: string, name: string, migrate = async (url: string) => (await openDatabase(url, 2)).end()): Promise<string> {
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  const url = baseUrl.replace(/\/postgres$/, `/${name}`);
  await migrate(url);
  return url;
}
