/**
 * A private PostgreSQL server for the tests: a fresh cluster in a temp dir, on 127.0.0.1 and a
 * free port, started with Debian's initdb and pg_ctl (as the postgres user when run as root, as
 * initdb requires). It can be restarted mid-test and is removed afterwards.
 *
 * Where no PostgreSQL binaries exist, `postgresAvailable()` says so (see system-tools.ts).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemToolPresent } from './system-tools.ts';
import { freePort } from './free-port.ts';

export interface PostgresServer {
  url: string;
  port: number;
  /** The cluster's folder (its data in data/, its socket, its log), removed by stop(). */
  dir: string;
  restart(): void;
  stop(): void;
}

export function postgresBinDir(): string | null {
  if (process.env.DURABLE_AGENT_PG_BIN) return process.env.DURABLE_AGENT_PG_BIN;
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  const versions = fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : null;
}

export function postgresAvailable(): boolean {
  return systemToolPresent('PostgreSQL', postgresBinDir() !== null, 'apt-get install postgresql');
}

export interface StartPostgresOptions {
  /**
   * false: commits do not wait for the disk (fsync, synchronous_commit and full-page writes off).
   * For suites that crash the client, never the server: what they check is what a committed
   * transaction holds, which the server shows alike either way, while each commit's WAL flush (a
   * few ms on a slow disk, tens of thousands of them in a crash suite) is most of their wall time.
   * A cluster so started must not be killed and then read again (restart() stops it cleanly).
   */
  durableCommits?: boolean | undefined;
}

/** Where the test run's template cluster is (postgres-template.ts): copied instead of an initdb per cluster. */
export const TEMPLATE_ENV = 'DURABLE_AGENT_TEST_PG_TEMPLATE';

const asRoot = process.getuid?.() === 0;

/** One of PostgreSQL's programs, as the postgres user when run as root (initdb refuses root). */
function runTool(bin: string, tool: string, args: string[]): void {
  const command = asRoot ? 'runuser' : path.join(bin, tool);
  const argv = asRoot ? ['-u', 'postgres', '--', path.join(bin, tool), ...args] : args;
  const result = spawnSync(command, argv, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${tool} failed: ${result.stderr || result.stdout}`);
}

/** A new folder holding a fresh cluster in data/ (initdb, nothing started); the folder's path. */
export function initCluster(): string {
  const bin = postgresBinDir();
  if (!bin) throw new Error('no PostgreSQL binaries found');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'da-pg-'));
  if (asRoot) execFileSync('chown', ['-R', 'postgres:postgres', dir]);
  runTool(bin, 'initdb', ['-D', path.join(dir, 'data'), '-U', 'da', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  return dir;
}

/** A fresh cluster's folder: a copy of the run's template when there is one, else made by initdb. */
function newCluster(): string {
  const template = process.env[TEMPLATE_ENV];
  if (!template || !fs.existsSync(path.join(template, 'data', 'PG_VERSION'))) return initCluster();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'da-pg-'));
  // cp -a keeps the owner (postgres) and the data folder's mode (0700), which the server checks.
  execFileSync('cp', ['-a', path.join(template, 'data'), path.join(dir, 'data')]);
  if (asRoot) execFileSync('chown', ['postgres:postgres', dir]);
  return dir;
}

export async function startPostgres(startOptions: StartPostgresOptions = {}): Promise<PostgresServer> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('no PostgreSQL binaries found');
  const dir = newCluster();
  const data = path.join(dir, 'data');
  const port = await freePort();
  const run = (tool: string, args: string[]) => runTool(bin, tool, args);
  const fastCommits = startOptions.durableCommits === false ? ' -c fsync=off -c synchronous_commit=off -c full_page_writes=off' : '';
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c max_connections=200${fastCommits}`;
  const start = () => run('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', 'start']);
  start();
  return {
    url: `postgresql://da@127.0.0.1:${port}/postgres`,
    port,
    dir,
    restart() {
      run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      start();
    },
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
