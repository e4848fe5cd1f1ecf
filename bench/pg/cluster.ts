/**
 * bench:pg's throwaway cluster: started with the tests' helper, set up so that nothing but the
 * contenders writes WAL while they run (autovacuum off, checkpoints on demand), with
 * pg_stat_statements loaded to count each contender's statements. It is removed on every way
 * out: the end, a throw, SIGINT or SIGTERM (exit-cleanup.ts), and a SIGKILL too: a watchdog
 * process outlives the bench, and when the bench is gone it stops the cluster and removes it.
 */
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { openPool } from '../../src/store/pg/pool.ts';
import { startPostgres } from '../../test/helpers/postgres-server.ts';
import { onExit } from '../exit-cleanup.ts';
import type { PgSample } from './report.ts';

const SETTINGS = ["shared_preload_libraries = 'pg_stat_statements'", 'autovacuum = off', "checkpoint_timeout = '1h'", "max_wal_size = '8GB'"];

/**
 * Waits for the bench (argv[1]) to be gone, then stops the postmaster of the cluster in argv[2]
 * (SIGQUIT: an immediate stop) and removes that folder. Plain JavaScript, run by `node -e`.
 */
const WATCHDOG = `
const fs = require('node:fs');
const [bench, dir] = process.argv.slice(1);
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };
const timer = setInterval(() => {
  if (alive(Number(bench))) return;
  clearInterval(timer);
  let postmaster = null;
  try { postmaster = Number(fs.readFileSync(dir + '/data/postmaster.pid', 'utf8').split('\\n')[0]); } catch {}
  if (postmaster && alive(postmaster)) process.kill(postmaster, 'SIGQUIT');
  const until = Date.now() + 10000;
  const remove = () => {
    if (postmaster && alive(postmaster) && Date.now() < until) return setTimeout(remove, 100);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  remove();
}, 500);
`;

export class BenchCluster {
  private constructor(
    readonly admin: pg.Pool,
    private readonly url: string,
  ) {}

  static async start(): Promise<BenchCluster> {
    const server = await startPostgres();
    const watchdog = spawn(process.execPath, ['-e', WATCHDOG, String(process.pid), server.dir], { detached: true, stdio: 'ignore' });
    watchdog.unref();
    onExit('the PostgreSQL cluster', () => {
      server.stop();
      watchdog.kill();
    });
    const setup = openPool(server.url, 1);
    try {
      for (const setting of SETTINGS) await setup.query(`ALTER SYSTEM SET ${setting}`);
    } finally {
      await setup.end();
    }
    server.restart();
    const admin = openPool(server.url, 2);
    await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    return new BenchCluster(admin, server.url);
  }

  urlOf(database: string): string {
    return this.url.replace(/\/postgres$/, `/${database}`);
  }

  async createDatabase(database: string): Promise<string> {
    await this.admin.query(`CREATE DATABASE ${database}`);
    return this.urlOf(database);
  }

  async version(): Promise<string> {
    return (await this.admin.query<{ v: string }>('SELECT version() AS v')).rows[0]!.v.split(' on ')[0]!;
  }

  /**
   * Starts a contender's span from a checkpoint (each starts with no page already in the WAL
   * since one) with no statement counted yet; the function it returns ends the span: its time,
   * this process's CPU time, the WAL made since, and the statements executed in `database`.
   */
  async begin(database: string): Promise<() => Promise<PgSample>> {
    await this.admin.query('CHECKPOINT');
    await this.admin.query('SELECT pg_stat_statements_reset()');
    const { rows } = await this.admin.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn');
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    return async () => {
      const ms = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      const wal = await this.admin.query<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1)::bigint::text AS bytes', [rows[0]!.lsn]);
      const calls = await this.admin.query<{ n: string }>(
        'SELECT coalesce(sum(s.calls), 0)::text AS n FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1',
        [database],
      );
      return { ms, cpuMs: (cpu.user + cpu.system) / 1000, walBytes: Number(wal.rows[0]!.bytes), statements: Number(calls.rows[0]!.n) };
    };
  }
}
