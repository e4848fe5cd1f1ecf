import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { langOfLocale, LOCALE_VARIABLES } from '../../src/lang/lang.ts';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(REPO, 'bin', 'durable-agent.mjs');

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Environment for a child CLI: no inherited crash drills, no key, not a CI terminal quirk, and
 * no locale that would have the demo speak other than English (a test that wants one sets it).
 */
export function cliEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['CRASH_AFTER', 'CRASH_MODE', 'DURABLE_AGENT_FAIL_WRITE', 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL']) delete env[name];
  for (const name of LOCALE_VARIABLES) if (langOfLocale({ [name]: env[name] }) !== 'en') delete env[name];
  for (const name of Object.keys(env)) if (name.startsWith('OTEL_')) delete env[name];
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** Runs the real CLI as a child process, stdout and stderr captured (so stdout is not a terminal). */
export function runCli(args: string[], options: { cwd: string; env?: Record<string, string | undefined> }): CliRun {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd: options.cwd,
    env: cliEnv(options.env),
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (result.error) throw result.error;
  return { code: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
}

/** Starts the CLI without waiting, for tests that need two processes at once. */
export function startCli(args: string[], options: { cwd: string; env?: Record<string, string | undefined> }) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd, env: cliEnv(options.env) });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const done = new Promise<CliRun>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done, output: () => stdout };
}

/** Like runCli, without blocking the event loop (for tests that run concurrently). */
export async function runCliAsync(args: string[], options: { cwd: string; env?: Record<string, string | undefined> }): Promise<CliRun> {
  return startCli(args, options).done;
}
