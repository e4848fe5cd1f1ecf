/**
 * The console's token never comes from the command line, where every user of the machine reads
 * it (ps, /proc/PID/cmdline): it comes from DURABLE_AGENT_CONSOLE_TOKEN or from a file only its
 * owner can read (--token-file), and `--token NAME:SECRET` is refused with where to give it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { addToken } from '../../src/access/tokens-file.ts';
import { type CliRun, runCliAsync, startCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const SECRET = 'console-token-test-secret-0123456789';
const TOKEN = `ana:${SECRET}`;

const started: Array<ReturnType<typeof startCli>> = [];

afterEach(async () => {
  for (const served of started.splice(0)) {
    if (served.child.exitCode === null) served.child.kill('SIGINT');
    await served.done;
  }
});

/** Starts the console on a free port; resolves with its origin once it says where it listens. */
async function serve(args: string[], env: Record<string, string | undefined> = {}) {
  const dir = tempDir();
  const served = startCli(['console', '--dir', dir, '--port', '0', ...args], { cwd: dir, env: { DURABLE_AGENT_CONSOLE_TOKEN: undefined, ...env } });
  started.push(served);
  const origin = await vi.waitFor(
    () => {
      if (served.child.exitCode !== null) throw new Error(`the console exited: ${served.output()}`);
      const found = /\[console\] (http:\/\/[^/\s]+)\//.exec(served.output())?.[1];
      if (!found) throw new Error(`the console has not said where it listens: ${served.output()}`);
      return found;
    },
    { timeout: 30_000, interval: 50 },
  );
  return { served, origin };
}

/** The command's end, or 'serving' as soon as the console says where it listens (it never ends by itself then). */
function endedOrServing(cli: ReturnType<typeof startCli>): Promise<CliRun | 'serving'> {
  return new Promise((resolve) => {
    cli.child.stdout.on('data', () => {
      if (/\[console\] http/.test(cli.output())) resolve('serving');
    });
    void cli.done.then(resolve);
  });
}

async function listStatus(origin: string, token: string | null): Promise<number> {
  const response = await fetch(`${origin}/api/runs`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
  await response.body?.cancel();
  return response.status;
}

function tokenFile(mode: number): string {
  const file = path.join(tempDir(), 'console-token');
  fs.writeFileSync(file, `${TOKEN}\n`);
  fs.chmodSync(file, mode);
  return file;
}

describe('the console token', () => {
  it('given inline (--token NAME:SECRET) is refused, with where to give it instead', async () => {
    const dir = tempDir();
    const refused = startCli(['console', '--dir', dir, '--port', '0', '--token', TOKEN], { cwd: dir, env: { DURABLE_AGENT_CONSOLE_TOKEN: undefined } });
    started.push(refused);
    const run = await endedOrServing(refused);
    if (run === 'serving') expect.fail(`the console started with the secret on its command line: ${refused.output()}`);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('DURABLE_AGENT_CONSOLE_TOKEN');
    expect(run.stderr).toContain('--token-file');
    expect(run.stderr).not.toContain(SECRET);
  });

  it('from DURABLE_AGENT_CONSOLE_TOKEN guards the page, and is nowhere in the process arguments', async () => {
    const { served, origin } = await serve([], { DURABLE_AGENT_CONSOLE_TOKEN: TOKEN });
    expect(await listStatus(origin, TOKEN)).toBe(200);
    expect(await listStatus(origin, null)).toBe(403);
    expect(served.output()).toContain('decisions recorded as by ana');
    const argv = fs.readFileSync(`/proc/${served.child.pid}/cmdline`, 'utf8').split('\0');
    expect(argv).toContain('console');
    expect(argv.join(' ')).not.toContain(SECRET);
  });

  it('from a file only its owner can read (0600) guards the page', async () => {
    const file = tokenFile(0o600);
    const { served, origin } = await serve(['--token-file', file], { DURABLE_AGENT_CONSOLE_TOKEN: 'other:not-this-one' });
    expect(await listStatus(origin, TOKEN)).toBe(200);
    expect(await listStatus(origin, 'other:not-this-one')).toBe(403);
    expect(served.output()).toContain('decisions recorded as by ana');
  });

  it('from a file others can read (0644) is refused, with the chmod that fixes it', async () => {
    const file = tokenFile(0o644);
    const dir = tempDir();
    const run = await runCliAsync(['console', '--dir', dir, '--port', '0', '--token-file', file], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(file);
    expect(run.stderr).toContain(`chmod 600 ${file}`);
    expect(run.stderr).not.toContain(SECRET);
  });

  it('from a missing or empty file is refused, naming it', async () => {
    const dir = tempDir();
    const missing = path.join(dir, 'no-such-token');
    const gone = await runCliAsync(['console', '--dir', dir, '--port', '0', '--token-file', missing], { cwd: dir });
    expect(gone.code).toBe(2);
    expect(gone.stderr).toContain(missing);
    const empty = path.join(tempDir(), 'empty-token');
    fs.writeFileSync(empty, '\n', { mode: 0o600 });
    const blank = await runCliAsync(['console', '--dir', dir, '--port', '0', '--token-file', empty], { cwd: dir });
    expect(blank.code).toBe(2);
    expect(blank.stderr).toContain(`${empty} holds no token`);
  });

  it('from a tokens file (--tokens-file) is taken beside its own, each with its name; a file others can read is refused', async () => {
    const file = path.join(tempDir(), 'tokens.json');
    const { token } = addToken(file, { name: 'acme-ops', role: 'read', tenant: 'acme' });
    const { served, origin } = await serve(['--tokens-file', file], { DURABLE_AGENT_CONSOLE_TOKEN: TOKEN });
    expect(await listStatus(origin, token)).toBe(200);
    expect(await listStatus(origin, TOKEN)).toBe(200);
    expect(await listStatus(origin, `acme-ops:${SECRET}`)).toBe(403);
    expect(served.output()).toContain(`the tokens of ${file} are taken too`);
    expect(served.output()).not.toContain(token.split(':')[1]);
    fs.chmodSync(file, 0o644);
    const dir = tempDir();
    const run = await runCliAsync(['console', '--dir', dir, '--port', '0', '--tokens-file', file], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`chmod 600 ${file}`);
  });
});
