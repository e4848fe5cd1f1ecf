/**
 * Debian's PgBouncer in front of a test cluster, in transaction pooling mode with a small pool,
 * as a hosted pooler runs it: each transaction may go to another server connection. It runs as
 * the postgres user when the tests run as root (PgBouncer refuses to run as root), on a free
 * port of 127.0.0.1, trusting the cluster's user, and is stopped and removed afterwards.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.ts';
import { systemToolPresent } from './system-tools.ts';

const PGBOUNCER = '/usr/sbin/pgbouncer';

export function pgbouncerAvailable(): boolean {
  return systemToolPresent('PgBouncer', fs.existsSync(PGBOUNCER), 'apt-get install pgbouncer');
}

export interface PgBouncerServer {
  /** The URL of `database` through the pooler, with pgbouncer=true. */
  urlOf(database: string): string;
  /** What the pooler logged (its refusals say why a statement failed). */
  log(): string;
  stop(): Promise<void>;
}

/** Starts PgBouncer in front of the cluster on `serverPort` (user da, trusted); `poolSize` server connections per database. */
export async function startPgBouncer(serverPort: number, poolSize = 2): Promise<PgBouncerServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'da-pgbouncer-'));
  const port = await freePort();
  fs.writeFileSync(path.join(dir, 'users.txt'), '"da" ""\n');
  fs.writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=127.0.0.1 port=${serverPort}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      // Each transaction to the next server connection in turn, not the last one used: what a busy pooler does anyway.
      'server_round_robin = 1',
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 200',
      `logfile = ${path.join(dir, 'pgbouncer.log')}`,
      'ignore_startup_parameters = extra_float_digits,options',
      '',
    ].join('\n'),
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot) execFileSync('chown', ['-R', 'postgres:postgres', dir]);
  const args = [path.join(dir, 'pgbouncer.ini')];
  const child: ChildProcess = asRoot ? spawn('runuser', ['-u', 'postgres', '--', PGBOUNCER, ...args], { stdio: 'ignore' }) : spawn(PGBOUNCER, args, { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const log = () => {
    try {
      return fs.readFileSync(path.join(dir, 'pgbouncer.log'), 'utf8');
    } catch {
      return '';
    }
  };
  await untilListening(port, child, log);
  return {
    urlOf: (database) => `postgresql://da@127.0.0.1:${port}/${database}?pgbouncer=true`,
    log,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function untilListening(port: number, child: ChildProcess, log: () => string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited (${child.exitCode}): ${log()}`);
    if (await accepts(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`pgbouncer did not listen on ${port}: ${log()}`);
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
