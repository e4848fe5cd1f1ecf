/**
 * Claude's bash tool (bash_20250124, named bash), run here: each command in a fresh /bin/bash
 * whose working directory is the run's directory, with a time limit and its output capped.
 *
 * What it does not do, said plainly: it is no sandbox. A shell can read and write anything the
 * user running the agent can (`cd /`, an absolute path), which the file tools and the text
 * editor refuse; so it is offered only when asked for (`--tools bash`). What it does to narrow
 * the reach: the environment is a minimal one built here (PATH, HOME set to the directory, a
 * locale), never the agent's own, so ANTHROPIC_API_KEY and any other secret in the agent's
 * environment are not there to be read; no profile or rc file runs; stdin is closed.
 *
 * No shell state is kept between calls (a kill would lose it anyway, and a resumed run must not
 * depend on it): a `cd` or an `export` lasts for its own command only; `restart` has nothing to
 * restart and says so.
 *
 * On a resume a command is a side effect whose outcome is unknown, and the model is told so,
 * unless it is one the tool was told is read-only (`readOnlyCommands`), which simply runs again.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { defineTool, type ToolDefinition } from '../tool.ts';
import { BashTimeoutError } from './bash-errors.ts';

export const BASH_NAME = 'bash';
export const BASH_TYPE = 'bash_20250124';
export const DEFAULT_BASH_TIMEOUT_MS = 120_000;
export const DEFAULT_BASH_OUTPUT_BYTES = 30_000;
/** What runs the commands: bash itself, by its path, not whatever `sh` is. */
export const BASH_PATH = '/bin/bash';

export interface BashOptions {
  /** A command still running after this long is killed, with all it started (default 2 minutes). */
  timeoutMs?: number | undefined;
  /** Output (stdout and stderr together, as they come) past this many bytes is dropped, and the result says how much (default 30000). */
  maxOutputBytes?: number | undefined;
  /**
   * Commands that change nothing, so that a resume may run them again: a string matches the
   * command exactly, a RegExp must match the whole of it. `ls` declares `ls` only, not `ls; rm x`.
   */
  readOnlyCommands?: ReadonlyArray<string | RegExp> | undefined;
}

export interface BashInput {
  command?: string;
  restart?: boolean;
}

export const BASH_SCHEMA = {
  type: 'object',
  properties: { command: { type: 'string' }, restart: { type: 'boolean' } },
  anyOf: [{ required: ['command'] }, { required: ['restart'] }],
} as const;

export function bashTool(dir: string, options: BashOptions = {}): ToolDefinition<BashInput> {
  const cwd = path.resolve(dir);
  const timeoutMs = options.timeoutMs ?? DEFAULT_BASH_TIMEOUT_MS;
  const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_BASH_OUTPUT_BYTES;
  const declared = options.readOnlyCommands ?? [];
  const readOnlyCommand = (command: string) => declared.some((entry) => (typeof entry === 'string' ? entry === command : wholeMatch(entry, command)));
  return defineTool<BashInput>({
    name: BASH_NAME,
    description: `Claude's bash tool: each command runs in a fresh /bin/bash in ${cwd}.`,
    inputSchema: BASH_SCHEMA as unknown as Record<string, unknown>,
    anthropicDefined: { type: BASH_TYPE },
    readOnly: false,
    // A restart changes nothing: there is no session to restart.
    readOnlyWhen: (input) => {
      const { command, restart } = input as BashInput;
      return command === undefined ? restart === true : readOnlyCommand(command);
    },
    traitSources: { readOnly: declared.length ? 'the read-only commands bashTool was given' : 'no command was declared read-only' },
    // Its own limit comes first; the runtime's, a little later, is only a backstop.
    timeoutMs: timeoutMs + 5_000,
    async run(input, ctx) {
      if (input.command === undefined) {
        return `Nothing to restart: every command runs in a fresh shell in ${cwd}, so no state (a cd, an export) carries from one command to the next.`;
      }
      return runBash(input.command, { cwd, timeoutMs, maxOutputBytes, signal: ctx.signal });
    },
  });
}

/** A RegExp matches the command only as a whole: /ls/ does not declare "ls; rm -rf x". */
function wholeMatch(pattern: RegExp, command: string): boolean {
  const match = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, '')).exec(command);
  return match !== null && match.index === 0 && match[0].length === command.length;
}

/** The environment a command gets: nothing of the agent's own. */
export function bashEnvironment(cwd: string): NodeJS.ProcessEnv {
  return { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: cwd, PWD: cwd, LANG: 'C.UTF-8', TERM: 'dumb' };
}

interface RunSettings {
  cwd: string;
  timeoutMs: number;
  maxOutputBytes: number;
  signal: AbortSignal;
}

function runBash(command: string, settings: RunSettings): Promise<string> {
  const { cwd, timeoutMs, maxOutputBytes, signal } = settings;
  return new Promise((resolve, reject) => {
    // detached: the command gets a process group of its own, so a kill reaches all it started.
    const child = spawn(BASH_PATH, ['--noprofile', '--norc', '-c', command], { cwd, env: bashEnvironment(cwd), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let dropped = 0;
    const take = (chunk: Buffer) => {
      const part = chunk.subarray(0, Math.max(0, maxOutputBytes - keptBytes));
      if (part.length) kept.push(part);
      keptBytes += part.length;
      dropped += chunk.length - part.length;
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const output = () => {
      const text = Buffer.concat(kept).toString('utf8');
      return dropped ? `${text}\n(output truncated: the first ${maxOutputBytes} bytes are shown, ${dropped} more were not)` : text;
    };
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    const onAbort = () => killGroup();
    signal.addEventListener('abort', onAbort, { once: true });
    const settle = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    child.on('error', (error) => {
      settle();
      reject(error);
    });
    let exit: { code: number | null; killedBy: NodeJS.Signals | null } = { code: null, killedBy: null };
    child.on('exit', (code, killedBy) => {
      exit = { code, killedBy };
      // The shell is done; what it left running in the background (holding the pipes open) is not waited for.
      killGroup();
    });
    child.on('close', () => {
      settle();
      if (timedOut) return reject(new BashTimeoutError(command, timeoutMs, output()));
      if (signal.aborted) return reject(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
      const text = output();
      const status = exit.killedBy ? `(killed by ${exit.killedBy})` : exit.code === 0 ? '' : `(exit code ${exit.code})`;
      resolve([text, status].filter(Boolean).join(text.endsWith('\n') || !text ? '' : '\n') || '(no output)');
    });
  });
}
