/** Command-line parsing: pure, returns data or throws UsageError; never prints or exits. */

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface DemoArgs {
  command: 'demo';
  dir: string;
  resume: boolean;
  fresh: boolean;
  model: string | null;
  maxTurns: number | null;
  maxTokens: number | null;
  plain: boolean;
  verbose: boolean;
  listCrashPoints: boolean;
  verify: boolean;
  paceMs: number;
  jitterMs: number;
}

export interface StatusArgs {
  command: 'status' | 'history';
  dir: string;
  json: boolean;
}

export interface VizArgs {
  command: 'viz';
  dir: string;
  /** Where the page goes; by default DIR/.durable-agent/viz.html. */
  out: string | null;
  open: boolean;
  /** Print the machine as Stately Studio source instead of writing the page. */
  stately: boolean;
}

export type CliArgs = DemoArgs | StatusArgs | VizArgs | { command: 'help' } | { command: 'version' };

type FlagType = 'boolean' | 'string' | 'count';

const FLAGS: Record<string, Record<string, FlagType>> = {
  demo: {
    dir: 'string',
    resume: 'boolean',
    fresh: 'boolean',
    model: 'string',
    'max-turns': 'count',
    'max-tokens': 'count',
    plain: 'boolean',
    verbose: 'boolean',
    'list-crash-points': 'boolean',
    'no-verify': 'boolean',
    pace: 'count',
    jitter: 'count',
  },
  status: { dir: 'string', json: 'boolean' },
  history: { dir: 'string', json: 'boolean' },
  viz: { dir: 'string', out: 'string', open: 'boolean', stately: 'boolean' },
};

export const USAGE = `Usage:
  durable-agent demo [--dir DIR] [--resume | --fresh] [--model NAME] [--max-turns N] [--max-tokens N]
                     [--plain] [--verbose] [--no-verify] [--pace MS] [--jitter MS] [--list-crash-points]
  durable-agent status [--dir DIR] [--json]
  durable-agent history [--dir DIR] [--json]
  durable-agent viz [--dir DIR] [--out FILE.html] [--open] | viz --stately

The demo runs the lesson's task in DIR (default: the current directory), with its state in
DIR/.durable-agent/. It uses a scripted model unless --model names a real one
(then ANTHROPIC_API_KEY must be set). Kill it at any moment and run it again with --resume.

Crash drills: CRASH_AFTER=after-<point>:<n> stops the process right after the n-th pass of a
point (see --list-crash-points); CRASH_MODE=sigkill makes that a real SIGKILL.`;

export function parseArgs(argv: readonly string[], cwd: string): CliArgs {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') return { command: 'help' };
  if (command === 'version' || command === '--version') return { command: 'version' };
  const spec = FLAGS[command];
  if (!spec) throw new UsageError(`Unknown command "${command}". Run durable-agent --help for usage.`);
  const values = parseFlags(command, spec, rest);
  if (values.help) return { command: 'help' };
  const dir = typeof values.dir === 'string' ? values.dir : cwd;
  if (command === 'status' || command === 'history') return { command, dir, json: values.json === true };
  if (command === 'viz') return vizArgs(dir, values);
  if (values.resume && values.fresh) throw new UsageError('--resume and --fresh contradict each other: resume the run, or discard it and start over.');
  return {
    command: 'demo',
    dir,
    resume: values.resume === true,
    fresh: values.fresh === true,
    model: typeof values.model === 'string' ? values.model : null,
    maxTurns: typeof values['max-turns'] === 'number' ? values['max-turns'] : null,
    maxTokens: typeof values['max-tokens'] === 'number' ? values['max-tokens'] : null,
    plain: values.plain === true,
    verbose: values.verbose === true,
    listCrashPoints: values['list-crash-points'] === true,
    verify: values['no-verify'] !== true,
    paceMs: typeof values.pace === 'number' ? values.pace : 0,
    jitterMs: typeof values.jitter === 'number' ? values.jitter : 0,
  };
}

function vizArgs(dir: string, values: Record<string, string | number | boolean>): VizArgs {
  const stately = values.stately === true;
  if (stately && (values.out !== undefined || values.open)) {
    throw new UsageError('--stately prints the machine to stdout; it takes no --out or --open (redirect it: > agent-loop.stately.js).');
  }
  return { command: 'viz', dir, out: typeof values.out === 'string' ? values.out : null, open: values.open === true, stately };
}

function parseFlags(command: string, spec: Record<string, FlagType>, args: readonly string[]): Record<string, string | number | boolean> {
  const values: Record<string, string | number | boolean> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--help' || arg === '-h') {
      values.help = true;
      continue;
    }
    if (!arg.startsWith('--')) throw new UsageError(`Unexpected argument "${arg}" for ${command}. Run durable-agent --help for usage.`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const type = spec[name];
    if (!type) throw new UsageError(`Unknown option --${name} for ${command}. Options: ${Object.keys(spec).map((f) => `--${f}`).join(' ')}`);
    if (type === 'boolean') {
      if (eq !== -1) throw new UsageError(`--${name} takes no value.`);
      values[name] = true;
      continue;
    }
    const raw = eq !== -1 ? arg.slice(eq + 1) : args[++i];
    if (raw === undefined || raw === '') throw new UsageError(`--${name} needs a value.`);
    if (type === 'count') {
      if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} takes a whole number, not "${raw}".`);
      values[name] = Number(raw);
    } else {
      values[name] = raw;
    }
  }
  for (const name of ['max-turns', 'max-tokens'] as const) {
    if (values[name] === 0) throw new UsageError(`--${name} must be at least 1.`);
  }
  return values;
}
