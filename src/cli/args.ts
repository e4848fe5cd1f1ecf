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
  api: ApiArgs;
  jitterMs: number;
  /** --accept-lost-record: resume although the journal's last committed record is cut short. */
  acceptLostRecord: boolean;
  /** --allow-tool-change: resume although another command or other tools started the run. */
  allowToolChange: boolean;
  /** Take the run's lock at once, whoever holds it. */
  takeOver: boolean;
}

export interface StatusArgs {
  command: 'status' | 'history';
  dir: string;
  json: boolean;
  /** Set: list the runs of a fleet in PostgreSQL instead of the run in DIR. */
  databaseUrl: string | null;
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

export interface DbArgs {
  command: 'db';
  action: 'migrate';
  databaseUrl: string | null;
}

export interface SubmitArgs {
  command: 'submit';
  kind: 'demo';
  databaseUrl: string | null;
  count: number;
  model: string | null;
  maxTurns: number | null;
  paceMs: number;
  jitterMs: number;
}

export interface WorkerArgs {
  command: 'worker';
  databaseUrl: string | null;
  concurrency: number;
  exitWhenIdle: boolean;
  leaseMs: number | null;
  pollMs: number | null;
  api: ApiArgs;
}

export interface RunArgs {
  command: 'run';
  dir: string;
  task: string | null;
  model: string | null;
  systemFile: string | null;
  resume: boolean;
  fresh: boolean;
  maxTurns: number | null;
  maxTokens: number | null;
  plain: boolean;
  verbose: boolean;
  api: ApiArgs;
  acceptLostRecord: boolean;
  allowToolChange: boolean;
  /** Take the run's lock at once, whoever holds it. */
  takeOver: boolean;
}

/** How a real model is called. */
export interface ApiArgs {
  maxRetries: number | null;
  timeoutMs: number | null;
}

export type CliArgs = DemoArgs | RunArgs | StatusArgs | DbArgs | SubmitArgs | WorkerArgs | VizArgs | { command: 'help' } | { command: 'version' };

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
    'max-retries': 'count',
    timeout: 'count',
    pace: 'count',
    jitter: 'count',
    'accept-lost-record': 'boolean',
    'allow-tool-change': 'boolean',
    'take-over': 'boolean',
  },
  run: {
    dir: 'string',
    task: 'string',
    model: 'string',
    system: 'string',
    resume: 'boolean',
    fresh: 'boolean',
    'max-turns': 'count',
    'max-tokens': 'count',
    plain: 'boolean',
    verbose: 'boolean',
    'max-retries': 'count',
    timeout: 'count',
    'accept-lost-record': 'boolean',
    'allow-tool-change': 'boolean',
    'take-over': 'boolean',
  },
  status: { dir: 'string', json: 'boolean', 'database-url': 'string' },
  history: { dir: 'string', json: 'boolean' },
  viz: { dir: 'string', out: 'string', open: 'boolean', stately: 'boolean' },
  db: { 'database-url': 'string' },
  submit: { 'database-url': 'string', count: 'count', model: 'string', 'max-turns': 'count', pace: 'count', jitter: 'count' },
  worker: {
    'database-url': 'string',
    concurrency: 'count',
    'exit-when-idle': 'boolean',
    'lease-ms': 'count',
    'poll-ms': 'count',
    'max-retries': 'count',
    timeout: 'count',
  },
};

export const USAGE = `Usage:
  durable-agent demo [--dir DIR] [--resume | --fresh] [--model NAME] [--max-turns N] [--max-tokens N]
                     [--plain] [--verbose] [--no-verify] [--pace MS] [--jitter MS] [--list-crash-points] [--take-over]
  durable-agent run --task TEXT --model NAME [--dir DIR] [--system FILE] [--max-turns N] [--max-tokens N]
                    [--resume | --fresh] [--plain] [--verbose] [--max-retries N] [--timeout MS] [--take-over]
  With --resume, demo and run also take --accept-lost-record (go on from the record before a
  committed record that is cut short; what it started may happen again) and --allow-tool-change
  (go on although another command or other tools started the run).
  durable-agent status [--dir DIR] [--json]
  durable-agent history [--dir DIR] [--json]
  durable-agent viz [--dir DIR] [--out FILE.html] [--open] | viz --stately

Fleets (PostgreSQL; the URL may also come from DURABLE_AGENT_DATABASE_URL):
  durable-agent db migrate --database-url URL
  durable-agent submit demo --database-url URL [--count N] [--model NAME] [--max-turns N] [--pace MS] [--jitter MS]
  durable-agent worker --database-url URL [--concurrency K] [--exit-when-idle] [--lease-ms MS] [--poll-ms MS]
  durable-agent status --database-url URL [--json]

The demo runs the lesson's task in DIR (default: the current directory), with its state in
DIR/.durable-agent/. It uses a scripted model unless --model names a real one
(then ANTHROPIC_API_KEY must be set). Kill it at any moment and run it again with --resume.

run gives a real model (ANTHROPIC_API_KEY) your task and three tools on the files of DIR:
list_files, read_file and write_file. --max-retries (default 4) and --timeout (ms per attempt,
default 600000) set how the Anthropic API is called; ANTHROPIC_BASE_URL points it elsewhere.

Crash drills: CRASH_AFTER=after-<point>:<n> stops the process right after the n-th pass of a
point (see --list-crash-points); CRASH_MODE=sigkill makes that a real SIGKILL.`;

export function parseArgs(argv: readonly string[], cwd: string): CliArgs {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') return { command: 'help' };
  if (command === 'version' || command === '--version') return { command: 'version' };
  const spec = FLAGS[command];
  if (!spec) throw new UsageError(`Unknown command "${command}". Run durable-agent --help for usage.`);
  const { values } = parseFlags(command, spec, rest, POSITIONALS[command] ?? []);
  if (values.help) return { command: 'help' };
  const dir = typeof values.dir === 'string' ? values.dir : cwd;
  const databaseUrl = typeof values['database-url'] === 'string' ? values['database-url'] : null;
  const count = (name: string) => (typeof values[name] === 'number' ? (values[name] as number) : null);
  if (command === 'status' || command === 'history') return { command, dir, json: values.json === true, databaseUrl };
  if (command === 'viz') return vizArgs(dir, values);
  if (command === 'db') return { command, action: 'migrate', databaseUrl };
  if (command === 'submit') {
    return {
      command,
      kind: 'demo',
      databaseUrl,
      count: count('count') ?? 1,
      model: typeof values.model === 'string' ? values.model : null,
      maxTurns: count('max-turns'),
      paceMs: count('pace') ?? 0,
      jitterMs: count('jitter') ?? 0,
    };
  }
  if (command === 'worker') {
    return {
      command,
      databaseUrl,
      concurrency: count('concurrency') ?? 1,
      exitWhenIdle: values['exit-when-idle'] === true,
      leaseMs: count('lease-ms'),
      pollMs: count('poll-ms'),
      api: { maxRetries: count('max-retries'), timeoutMs: count('timeout') },
    };
  }

  if (values.resume && values.fresh) throw new UsageError('--resume and --fresh contradict each other: resume the run, or discard it and start over.');
  for (const name of ['accept-lost-record', 'allow-tool-change']) {
    if (values[name] && !values.resume) throw new UsageError(`--${name} only applies to --resume: it decides whether a stored run is picked up.`);
  }
  const resumeChoices = { acceptLostRecord: values['accept-lost-record'] === true, allowToolChange: values['allow-tool-change'] === true };
  const api: ApiArgs = {
    maxRetries: typeof values['max-retries'] === 'number' ? values['max-retries'] : null,
    timeoutMs: typeof values.timeout === 'number' ? values.timeout : null,
  };
  if (command === 'run') {
    const task = typeof values.task === 'string' ? values.task : null;
    if (values.resume && task !== null) throw new UsageError('--task is stored with the run: --resume takes it from there. Drop --task, or start a new run with --fresh.');
    if (!values.resume && task === null) throw new UsageError('run needs --task "what to do" (or --resume to go on with a stored run).');
    if (typeof values.model !== 'string') throw new UsageError('run needs --model NAME (a Claude model, e.g. claude-sonnet-4-5); the demo is the command that runs without one.');
    return {
      command: 'run',
      dir,
      task,
      model: values.model,
      systemFile: typeof values.system === 'string' ? values.system : null,
      resume: values.resume === true,
      fresh: values.fresh === true,
      maxTurns: typeof values['max-turns'] === 'number' ? values['max-turns'] : null,
      maxTokens: typeof values['max-tokens'] === 'number' ? values['max-tokens'] : null,
      plain: values.plain === true,
      verbose: values.verbose === true,
      api,
      ...resumeChoices,
      takeOver: values['take-over'] === true,
    };
  }
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
    api,
    ...resumeChoices,
    takeOver: values['take-over'] === true,
  };
}

function vizArgs(dir: string, values: Record<string, string | number | boolean>): VizArgs {
  const stately = values.stately === true;
  if (stately && (values.out !== undefined || values.open)) {
    throw new UsageError('--stately prints the machine to stdout; it takes no --out or --open (redirect it: > agent-loop.stately.js).');
  }
  return { command: 'viz', dir, out: typeof values.out === 'string' ? values.out : null, open: values.open === true, stately };
}


/** The words some commands take besides options, in order: `db migrate`, `submit demo`. */
const POSITIONALS: Record<string, string[]> = { db: ['migrate'], submit: ['demo'] };

function parseFlags(
  command: string,
  spec: Record<string, FlagType>,
  args: readonly string[],
  expected: readonly string[],
): { values: Record<string, string | number | boolean>; positionals: string[] } {
  const values: Record<string, string | number | boolean> = {};
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--help' || arg === '-h') {
      values.help = true;
      continue;
    }
    if (!arg.startsWith('--')) {
      if (positionals.length < expected.length && arg === expected[positionals.length]) {
        positionals.push(arg);
        continue;
      }
      const wanted = expected.length ? ` (expected: ${command} ${expected.join(' ')})` : '';
      throw new UsageError(`Unexpected argument "${arg}" for ${command}${wanted}. Run durable-agent --help for usage.`);
    }
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
  for (const name of ['max-turns', 'max-tokens', 'count', 'concurrency', 'lease-ms'] as const) {
    if (values[name] === 0) throw new UsageError(`--${name} must be at least 1.`);
  }
  if (positionals.length < expected.length && !values.help) {
    throw new UsageError(`${command} needs: ${command} ${expected.join(' ')}. Run durable-agent --help for usage.`);
  }
  return { values, positionals };
}
