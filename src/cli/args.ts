/**
 * Command-line parsing: pure, returns data or throws UsageError; never prints or exits.
 * node:util's parseArgs splits the words (`--a=b`, `--`, `-h`); every rule about what a word may
 * be comes from the command table, which the help is printed from too.
 */
import { parseArgs as splitArgs } from 'node:util';
import { COMMANDS, commandSpec, type CommandSpec, type OptionSpec } from './command-table.ts';
import { formatDuration, parseDuration } from './duration.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

export class UsageError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'UsageError';
}

export interface DemoArgs {
  command: 'demo';
  dir: string;
  resume: boolean;
  /** --message: with --resume, the user's next message to a done run. */
  message: string | null;
  fresh: boolean;
  takeOver: boolean;
  acceptLostRecord: boolean;
  allowToolChange: boolean;
  replaceDecisionPolicy: boolean;
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
  /** --otel-content: traces carry messages and tool content (when traces are exported). */
  otelContent: boolean;
  approval: ApprovalArgs;
  /** --max-cost-usd, --max-total-tokens: a new run's budget, or the limits a resume changes. */
  maxCostUsd: number | null;
  maxTotalTokens: number | null;
  compaction: CompactionArgs;
}

/** --max-cost-usd and --max-total-tokens (demo and run). */
export type BudgetArgs = Pick<DemoArgs, 'maxCostUsd' | 'maxTotalTokens'>;

/** Which calls wait for a person, and whether the run waits for them (demo and run). */
export interface ApprovalArgs {
  /** --require-approval: tool names, every side-effecting tool, or none. */
  requireApproval: string[] | 'side-effects' | null;
  /** true: --wait; false: --no-wait; null: wait when stdout is a terminal. */
  wait: boolean | null;
  decisionTimeoutMs: number | null;
}

export interface PendingArgs {
  command: 'pending';
  dir: string;
  json: boolean;
  /** --run ID: a fleet run, read from PostgreSQL (--database-url or DURABLE_AGENT_DATABASE_URL); null: the run in dir. */
  fleetRun: string | null;
  databaseUrl: string | null;
}

/** approve, deny, answer: one decision for one waiting call. */
export interface DecideArgs {
  command: 'approve' | 'deny' | 'answer';
  dir: string;
  /** --run ID: a fleet run (see PendingArgs). */
  fleetRun: string | null;
  databaseUrl: string | null;
  callId: string;
  /** approve --input: the edited input, parsed. Undefined when not given. */
  input?: unknown;
  note: string | null;
  /** deny --reason. */
  reason: string | null;
  /** answer's TEXT. */
  text: string | null;
  /** --by, else the CLI's user name (filled in by the command). */
  by: string | null;
}

export interface StatusArgs {
  command: 'status' | 'history';
  dir: string;
  /** Whether --dir was given: it then names the run to read even where a fleet database is configured. */
  dirGiven: boolean;
  json: boolean;
  /** Set: list the runs of a fleet in PostgreSQL instead of the run in DIR. */
  databaseUrl: string | null;
}

/** prune: which finished runs go (a rule is required: older-than, keep, or both). */
export interface PruneArgs {
  command: 'prune';
  dir: string;
  dirGiven: boolean;
  databaseUrl: string | null;
  olderThanMs: number | null;
  keep: number | null;
  dryRun: boolean;
}

/** cancel and pause: a run in --dir, or a fleet run (--run ID). */
export interface ControlArgs {
  command: 'cancel' | 'pause';
  dir: string;
  fleetRun: string | null;
  databaseUrl: string | null;
  /** cancel --reason. */
  reason: string | null;
  /** --by, else the CLI's user name with host and pid (filled in by the command). */
  by: string | null;
}

/** resume --run ID: clear a fleet run's pause. */
export interface FleetResumeArgs {
  command: 'resume';
  fleetRun: string;
  databaseUrl: string | null;
}

/** fork: a new run from a record of a run in a directory (--to) or of a fleet run (--run, --to-run). */
export interface ForkArgs {
  command: 'fork';
  dir: string;
  at: number | null;
  /** The new run's directory (file runs). */
  to: string | null;
  message: string | null;
  maxTurns: number | null;
  /** --run ID: fork a fleet run; null: the run in dir. */
  fleetRun: string | null;
  databaseUrl: string | null;
  /** With --run: the new fleet run's id (null: a new one). */
  toRun: string | null;
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
  /** --require-approval and --decision-timeout, pinned in each run (wait is always false in a fleet). */
  requireApproval: string[] | 'side-effects' | null;
  decisionTimeoutMs: number | null;
  /** --max-cost-usd, --max-total-tokens: each run's budget. */
  maxCostUsd: number | null;
  maxTotalTokens: number | null;
  /** --compact, --context-window, --compact-trigger, --clear-*: pinned in each run. */
  compaction: CompactionArgs;
}

export interface WorkerArgs {
  command: 'worker';
  databaseUrl: string | null;
  concurrency: number;
  exitWhenIdle: boolean;
  leaseMs: number | null;
  pollMs: number | null;
  api: ApiArgs;
  otelContent: boolean;
}

export interface RunArgs {
  command: 'run';
  dir: string;
  task: string | null;
  model: string | null;
  systemFile: string | null;
  /** --mcp-config FILE: the MCP servers whose tools join the file tools (an .mcp.json). */
  mcpConfig: string | null;
  resume: boolean;
  /** --message: with --resume, the user's next message to a done run. */
  message: string | null;
  fresh: boolean;
  takeOver: boolean;
  acceptLostRecord: boolean;
  allowToolChange: boolean;
  replaceDecisionPolicy: boolean;
  maxTurns: number | null;
  maxTokens: number | null;
  plain: boolean;
  verbose: boolean;
  api: ApiArgs;
  otelContent: boolean;
  approval: ApprovalArgs;
  allowQuestions: boolean;
  /** --tool-concurrency: null leaves the run's default (4). */
  toolConcurrency: number | null;
  /** False with --no-stream: each reply is asked for whole. */
  stream: boolean;
  maxCostUsd: number | null;
  maxTotalTokens: number | null;
  compaction: CompactionArgs;
}

/** --compact, --context-window, --compact-trigger (demo and run); null: not given. */
export interface CompactionArgs {
  mode: 'server' | 'client' | 'off' | null;
  contextWindow: number | null;
  triggerRatio: number | null;
  /** --clear-tool-uses and the --clear-* options; absent: none given. */
  clearToolUses?: ClearToolUsesArgs;
}

/** --clear-trigger, --clear-keep, --clear-at-least, --clear-exclude, --clear-inputs; null: not given. */
export interface ClearToolUsesArgs {
  triggerTokens: number | null;
  keep: number | null;
  clearAtLeast: number | null;
  excludeTools: string[] | null;
  clearToolInputs: boolean;
}

/** How a real model is called. */
export interface ApiArgs {
  maxRetries: number | null;
  timeoutMs: number | null;
}

/** `topic`: the command whose help was asked for, or null for the list of commands. */
export interface HelpArgs {
  command: 'help';
  topic: string | null;
}

export type CliArgs =
  | DemoArgs
  | RunArgs
  | StatusArgs
  | PendingArgs
  | DecideArgs
  | DbArgs
  | SubmitArgs
  | WorkerArgs
  | VizArgs
  | PruneArgs
  | ControlArgs
  | FleetResumeArgs
  | ForkArgs
  | HelpArgs
  | { command: 'version' };

export function parseArgs(argv: readonly string[], cwd: string): CliArgs {
  const [first, ...rest] = argv;
  if (first === undefined || first === '--help' || first === '-h') return { command: 'help', topic: null };
  if (first === 'help') return helpAbout(rest);
  if (first === '--version' || first === '-v' || first === 'version') {
    if (rest.length > 0) throw new UsageError(`${first} takes nothing after it.`);
    return { command: 'version' };
  }
  if (first.startsWith('-')) throw new UsageError(`${first} is not a command: the command comes first (durable-agent <command> [options]). Run durable-agent --help for the commands.`);
  const command = commandSpec(first);
  if (!command) throw new UsageError(`Unknown command "${first}". Commands: ${COMMANDS.map((c) => c.name).join(', ')}. Run durable-agent --help for usage.`);
  if (asksForHelp(rest)) return { command: 'help', topic: command.name };
  const { values, positionals } = readOptions(command, rest);
  return argsOf(command.name, new OptionValues(values, positionals), cwd);
}

function helpAbout(rest: readonly string[]): HelpArgs {
  const [topic, ...more] = rest;
  if (topic === undefined) return { command: 'help', topic: null };
  if (!commandSpec(topic) || more.length > 0) throw new UsageError(`help takes one command name (${COMMANDS.map((c) => c.name).join(', ')}), not "${rest.join(' ')}".`);
  return { command: 'help', topic };
}

/** `-h` or `--help` anywhere before `--` shows the command's help, whatever else is on the line. */
function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

type Value = string | number | boolean;

function readOptions(command: CommandSpec, args: readonly string[]): { values: Map<string, Value>; positionals: string[] } {
  const { tokens } = splitArgs({
    args: [...args],
    options: Object.fromEntries(command.options.map((option) => [option.name, { type: option.type === 'boolean' ? 'boolean' : 'string' }])),
    // Not strict: every refusal below is worded here, with what to do instead.
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values = new Map<string, Value>();
  const words: string[] = [];
  const positionals: string[] = [];
  const wanted = command.arguments ?? [];
  for (const token of tokens) {
    if (token.kind === 'option-terminator') continue;
    if (token.kind === 'positional') {
      if (words.length < command.words.length && token.value === command.words[words.length]) {
        words.push(token.value);
        continue;
      }
      if (words.length === command.words.length && positionals.length < wanted.length) {
        positionals.push(token.value);
        continue;
      }
      const expected = command.words.length > 0 || wanted.length > 0 ? ` (expected: ${usageOf(command)})` : '';
      throw new UsageError(`Unexpected argument "${token.value}" for ${command.name}${expected}. Run ${helpHint(command)} for its options.`);
    }
    const option = command.options.find((o) => o.name === token.name);
    if (!option || token.rawName !== `--${option.name}`) {
      throw new UsageError(`Unknown option ${token.rawName} for ${command.name}. Its options: ${command.options.map((o) => `--${o.name}`).join(' ')} (${helpHint(command)}).`);
    }
    if (values.has(option.name)) throw new UsageError(`--${option.name} is given twice: give it once.`);
    values.set(option.name, valueOf(option, token.value, token.inlineValue));
  }
  if (words.length < command.words.length) throw new UsageError(`${command.name} needs: ${usageOf(command)}. Run ${helpHint(command)} for usage.`);
  const missing = wanted.slice(positionals.length);
  if (missing.length > 0) {
    throw new UsageError(`${command.name} needs ${missing.map((arg) => `${arg.name} (${arg.help})`).join(' and ')}: ${usageOf(command)}. Run ${helpHint(command)} for usage.`);
  }
  for (const option of command.options) {
    if (option.default !== undefined && !values.has(option.name)) values.set(option.name, option.default);
  }
  return { values, positionals };
}

function valueOf(option: OptionSpec, value: string | undefined, inline: boolean | undefined): Value {
  const flag = `--${option.name}`;
  if (option.type === 'boolean') {
    if (value !== undefined) throw new UsageError(`${flag} takes no value (got "${value}").`);
    return true;
  }
  const shape = `${flag} ${option.value ?? 'VALUE'}`;
  if (value === undefined) throw new UsageError(`${flag} needs a value: ${shape}.`);
  // What Node's strict mode calls ambiguous: `--dir --plain` means a forgotten value far more
  // often than a directory named "--plain".
  if (!inline && value.length > 1 && value.startsWith('-')) {
    throw new UsageError(`${flag} needs a value, but the next word is "${value}", an option. Give it as ${shape}, or as ${flag}=${value} if the value really starts with "-".`);
  }
  if (value === '') throw new UsageError(`${flag} needs a value, not an empty one: ${shape}.`);
  if (option.type === 'string') return value;
  if (option.type === 'duration') return durationOf(option, value);
  if (option.type === 'decimal') return decimalOf(option, value);
  if (option.type === 'ratio') return ratioOf(option, value);
  return integerOf(option, value);
}

function durationOf(option: OptionSpec, text: string): number {
  const ms = parseDuration(text);
  const min = option.min ?? 1_000;
  const max = option.max ?? Number.MAX_SAFE_INTEGER;
  if (ms === null || ms < min || ms > max) {
    throw new UsageError(
      `--${option.name} takes a duration from ${formatDuration(min)} to ${formatDuration(max)}: a whole number and s, m, h or d (90s, 15m, 2h, 3d), not "${shorten(text)}".`,
    );
  }
  return ms;
}

function shorten(text: string): string {
  return text.length > 40 ? `${text.slice(0, 20)}…${text.slice(-10)} (${text.length} characters)` : text;
}

function ratioOf(option: OptionSpec, text: string): number {
  const number = /^(\d+\.?\d*|\.\d+)$/.test(text) ? Number(text) : Number.NaN;
  if (!(number >= option.min! && number <= option.max!)) {
    throw new UsageError(`--${option.name} takes a ratio from ${option.min} to ${option.max} (0.8 is 80%), not "${shorten(text)}".`);
  }
  return number;
}

function integerOf(option: OptionSpec, text: string): number {
  const min = option.min ?? 0;
  const max = option.max ?? Number.MAX_SAFE_INTEGER;
  const number = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(number >= min && number <= max)) {
    throw new UsageError(`--${option.name} takes a whole number from ${min} to ${max}, not "${shorten(text)}".`);
  }
  return number;
}

function decimalOf(option: OptionSpec, text: string): number {
  const min = option.min ?? 0;
  const max = option.max ?? Number.MAX_SAFE_INTEGER;
  const number = /^\d+(\.\d+)?$/.test(text) ? Number(text) : Number.NaN;
  if (!(number >= min && number <= max)) {
    throw new UsageError(`--${option.name} takes a number from ${min} to ${max} (digits and at most one ".", e.g. 2.50), not "${shorten(text)}".`);
  }
  return number;
}

/** Typed access to the parsed values of one command. */
class OptionValues {
  constructor(
    private readonly values: Map<string, Value>,
    /** The command's arguments, in the order of its table. */
    readonly positionals: readonly string[] = [],
  ) {}
  flag(name: string): boolean {
    return this.values.get(name) === true;
  }
  text(name: string): string | null {
    const value = this.values.get(name);
    return typeof value === 'string' ? value : null;
  }
  number(name: string): number | null {
    const value = this.values.get(name);
    return typeof value === 'number' ? value : null;
  }
  /** An integer option with a default in the table: always set. */
  numberWithDefault(name: string): number {
    const value = this.number(name);
    if (value === null) throw new Error(`--${name} has no default in the command table`);
    return value;
  }
}

function argsOf(command: string, values: OptionValues, cwd: string): CliArgs {
  const dir = values.text('dir') ?? cwd;
  const databaseUrl = values.text('database-url');
  const api: ApiArgs = { maxRetries: values.number('max-retries'), timeoutMs: values.number('timeout') };
  switch (command) {
    case 'status':
    case 'history':
      if (values.text('dir') !== null && databaseUrl !== null) {
        throw new UsageError('status reads either the run in --dir or the fleet at --database-url, not both: give one of them.');
      }
      return { command, dir, dirGiven: values.text('dir') !== null, json: values.flag('json'), databaseUrl };
    case 'viz':
      return vizArgs(dir, values);
    case 'prune':
      return pruneArgs(dir, values);
    case 'fork':
      return forkArgs(dir, values);
    case 'db':
      return { command, action: 'migrate', databaseUrl };
    case 'submit':
      return {
        command,
        kind: 'demo',
        databaseUrl,
        count: values.numberWithDefault('count'),
        model: values.text('model'),
        maxTurns: values.number('max-turns'),
        paceMs: values.numberWithDefault('pace'),
        jitterMs: values.numberWithDefault('jitter'),
        requireApproval: requiredApprovals(values.text('require-approval')),
        decisionTimeoutMs: values.number('decision-timeout'),
        ...budgetArgs(values),
        compaction: compactionArgs(values),
      };
    case 'worker':
      return {
        command,
        databaseUrl,
        concurrency: values.numberWithDefault('concurrency'),
        exitWhenIdle: values.flag('exit-when-idle'),
        leaseMs: values.number('lease-ms'),
        pollMs: values.number('poll-ms'),
        api,
        otelContent: values.flag('otel-content'),
      };
    case 'pending':
      return { command, dir, json: values.flag('json'), ...fleetRunOf(command, values) };
    case 'approve':
    case 'deny':
    case 'answer':
      return decideArgs(command, dir, values);
    case 'cancel':
    case 'pause': {
      const reason = values.text('reason');
      if (reason !== null && reason.trim() === '') throw new UsageError('--reason is empty: say why, e.g. --reason "wrong task", or leave it out.');
      return { command, dir, ...fleetRunOf(command, values), reason, by: values.text('by') };
    }
    case 'resume': {
      const fleetRun = values.text('run');
      if (fleetRun === null) {
        throw new UsageError(
          'resume lets a fleet run go on: it needs --run ID. A run in a directory is resumed by the command that drives it: durable-agent demo --resume --dir DIR (or run --resume).',
        );
      }
      return { command, fleetRun, databaseUrl };
    }
    case 'run':
      return runArgs(dir, values, api);
    case 'demo':
      return {
        command: 'demo',
        dir,
        ...startOrResume(values),
        model: values.text('model'),
        maxTurns: values.number('max-turns'),
        maxTokens: values.number('max-tokens'),
        plain: values.flag('plain'),
        verbose: values.flag('verbose'),
        listCrashPoints: values.flag('list-crash-points'),
        verify: !values.flag('no-verify'),
        paceMs: values.numberWithDefault('pace'),
        jitterMs: values.numberWithDefault('jitter'),
        api,
        otelContent: values.flag('otel-content'),
        approval: approvalArgs(values),
        ...budgetArgs(values),
        compaction: compactionArgs(values),
      };
  }
  throw new Error(`the command table names "${command}", which the parser does not know`);
}

/** What demo and run share: starting or resuming, and the resume-only permissions. */
function startOrResume(values: OptionValues) {
  const resume = values.flag('resume');
  if (resume && values.flag('fresh')) throw new UsageError('--resume and --fresh contradict each other: resume the run, or discard it and start over.');
  for (const name of ['accept-lost-record', 'allow-tool-change', 'replace-decision-policy']) {
    if (values.flag(name) && !resume) throw new UsageError(`--${name} only applies to --resume: it lets a resume go on with a stored run. Add --resume, or drop --${name}.`);
  }
  return {
    resume,
    message: continueMessage(values, resume),
    fresh: values.flag('fresh'),
    takeOver: values.flag('take-over'),
    acceptLostRecord: values.flag('accept-lost-record'),
    allowToolChange: values.flag('allow-tool-change'),
    replaceDecisionPolicy: values.flag('replace-decision-policy'),
  };
}

/** --message continues a done run: only with --resume, and never empty. */
function continueMessage(values: OptionValues, resume: boolean): string | null {
  const message = values.text('message');
  if (message === null) return null;
  if (!resume) throw new UsageError('--message continues a finished run: add --resume (a new run takes its first message with --task).');
  if (message.trim() === '') throw new UsageError('--message is empty: give the text the model should answer, e.g. --message "Now add a summary line".');
  return message;
}

function runArgs(dir: string, values: OptionValues, api: ApiArgs): RunArgs {
  const shared = startOrResume(values);
  const task = values.text('task');
  if (shared.resume && task !== null) throw new UsageError('--task is stored with the run: --resume takes it from there. Drop --task, or start a new run with --fresh.');
  if (!shared.resume && task === null) throw new UsageError('run needs --task "what to do" (or --resume to go on with a stored run).');
  const model = values.text('model');
  // A resume takes the model from the run's journal (the model it started with) unless one is given.
  if (model === null && !shared.resume) throw new UsageError('run needs --model NAME (a Claude model, e.g. claude-sonnet-4-5); the demo is the command that runs without one.');
  return {
    command: 'run',
    dir,
    task,
    model,
    systemFile: values.text('system'),
    mcpConfig: values.text('mcp-config'),
    ...shared,
    maxTurns: values.number('max-turns'),
    maxTokens: values.number('max-tokens'),
    plain: values.flag('plain'),
    verbose: values.flag('verbose'),
    api,
    otelContent: values.flag('otel-content'),
    approval: approvalArgs(values),
    allowQuestions: values.flag('allow-questions'),
    toolConcurrency: values.number('tool-concurrency'),
    stream: !values.flag('no-stream'),
    ...budgetArgs(values),
    compaction: compactionArgs(values),
  };
}

function budgetArgs(values: OptionValues): BudgetArgs {
  return { maxCostUsd: values.number('max-cost-usd'), maxTotalTokens: values.number('max-total-tokens') };
}

function compactionArgs(values: OptionValues): CompactionArgs {
  const mode = values.text('compact');
  if (mode !== null && mode !== 'server' && mode !== 'client' && mode !== 'off') {
    throw new UsageError(`--compact takes server, client or off, not "${shorten(mode)}".`);
  }
  return { mode, contextWindow: values.number('context-window'), triggerRatio: values.number('compact-trigger'), ...clearToolUsesArgs(values) };
}

/** Any --clear-* option asks for clearing, as --clear-tool-uses does (the numbers alone: a resume's new ones). */
function clearToolUsesArgs(values: OptionValues): { clearToolUses?: ClearToolUsesArgs } {
  const exclude = values.text('clear-exclude');
  const args: ClearToolUsesArgs = {
    triggerTokens: values.number('clear-trigger'),
    keep: values.number('clear-keep'),
    clearAtLeast: values.number('clear-at-least'),
    excludeTools: exclude === null ? null : exclude.split(',').map((name) => name.trim()),
    clearToolInputs: values.flag('clear-inputs'),
  };
  const given = values.flag('clear-tool-uses') || args.clearToolInputs || Object.values(args).some((value) => value !== null && value !== false);
  if (args.excludeTools?.some((name) => !/^[A-Za-z0-9_-]{1,64}$/.test(name))) {
    throw new UsageError(`--clear-exclude takes tool names separated by commas (read_file,list_files), not "${shorten(exclude!)}".`);
  }
  return given ? { clearToolUses: args } : {};
}

/** The names of --require-approval: tool names (checked against the tools by the command), or side-effects. */
function approvalArgs(values: OptionValues): ApprovalArgs {
  if (values.flag('wait') && values.flag('no-wait')) throw new UsageError('--wait and --no-wait contradict each other: give one of them (or neither: wait when stdout is a terminal).');
  return {
    requireApproval: requiredApprovals(values.text('require-approval')),
    wait: values.flag('no-wait') ? false : values.flag('wait') ? true : null,
    decisionTimeoutMs: values.number('decision-timeout'),
  };
}

function requiredApprovals(text: string | null): string[] | 'side-effects' | null {
  if (text === null) return null;
  const names = text.split(',').map((name) => name.trim());
  if (names.length === 1 && names[0] === 'side-effects') return 'side-effects';
  if (names.includes('side-effects')) throw new UsageError('--require-approval side-effects already covers every tool that is not read-only: give it alone, or give tool names.');
  const bad = names.find((name) => !/^[A-Za-z0-9_-]{1,64}$/.test(name));
  if (bad !== undefined) throw new UsageError(`--require-approval takes tool names separated by commas (write_report,count_words) or side-effects, not "${shorten(text)}".`);
  return [...new Set(names)];
}

function decideArgs(command: DecideArgs['command'], dir: string, values: OptionValues): DecideArgs {
  const [callId = '', text = null] = values.positionals;
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(callId)) {
    throw new UsageError(`"${shorten(callId)}" is not a call id: a call id is a tool_use_id such as toolu_01A9… (letters, digits, _ and -), as durable-agent pending lists it.`);
  }
  const args: DecideArgs = { command, dir, ...fleetRunOf(command, values), callId, note: values.text('note'), reason: values.text('reason'), text, by: values.text('by') };
  if (command === 'deny' && args.reason === null) throw new UsageError('deny needs --reason TEXT: the model is told why its call was denied.');
  if (command === 'answer' && text !== null && text.trim() === '') throw new UsageError('answer needs a TEXT that is not empty: it is what the model gets as the answer.');
  const input = values.text('input');
  if (input !== null) args.input = inputOf(input);
  return args;
}

/** --run ID (with --database-url or DURABLE_AGENT_DATABASE_URL): a fleet run; else the run in --dir. */
function fleetRunOf(command: string, values: OptionValues): { fleetRun: string | null; databaseUrl: string | null } {
  const fleetRun = values.text('run');
  const databaseUrl = values.text('database-url');
  if (fleetRun !== null && values.text('dir') !== null) {
    throw new UsageError(`${command} acts on the run in --dir or the fleet run --run ID, not both: give one of them.`);
  }
  if (fleetRun === null && databaseUrl !== null) {
    throw new UsageError(`${command} --database-url needs --run ID: the fleet run (its id, as submit printed it; durable-agent status --database-url lists them).`);
  }
  return { fleetRun, databaseUrl };
}

function inputOf(text: string): unknown {
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--input is not JSON (${(error as Error).message}): give the whole input as a JSON object, e.g. --input '{"text":"…"}'.`);
  }
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new UsageError(`--input must be a JSON object (a tool's input), not ${Array.isArray(input) ? 'an array' : JSON.stringify(input)}.`);
  }
  return input;
}

function pruneArgs(dir: string, values: OptionValues): PruneArgs {
  const databaseUrl = values.text('database-url');
  if (values.text('dir') !== null && databaseUrl !== null) {
    throw new UsageError('prune removes either the archived runs in --dir or the finished runs of the fleet at --database-url, not both: give one of them.');
  }
  const olderThanMs = values.number('older-than');
  const keep = values.number('keep');
  if (olderThanMs === null && keep === null) {
    throw new UsageError('prune needs a rule: --older-than DURATION (e.g. 30d), --keep N (the N newest finished runs stay), or both. Nothing was removed.');
  }
  return { command: 'prune', dir, dirGiven: values.text('dir') !== null, databaseUrl, olderThanMs, keep, dryRun: values.flag('dry-run') };
}

function forkArgs(dir: string, values: OptionValues): ForkArgs {
  const fleetRun = values.text('run');
  const databaseUrl = values.text('database-url');
  const to = values.text('to');
  const toRun = values.text('to-run');
  const message = values.text('message');
  if (fleetRun !== null) {
    if (values.text('dir') !== null || to !== null) {
      throw new UsageError('fork --run forks a fleet run into a new fleet run (--to-run ID, or a new id): it takes no --dir or --to. Give one kind of run.');
    }
  } else {
    if (databaseUrl !== null) throw new UsageError('fork --database-url needs --run ID: the fleet run to fork (durable-agent status --database-url lists them).');
    if (toRun !== null) throw new UsageError('--to-run names the new fleet run of fork --run ID; a run in a directory is forked with --to NEWDIR.');
    if (to === null) throw new UsageError('fork needs --to NEWDIR: the directory of the new run (it must hold no run). Nothing was written.');
  }
  if (message !== null && message.trim() === '') throw new UsageError('--message is empty: give the text the model should answer, e.g. --message "Now add a summary line".');
  if (values.number('max-turns') !== null && message === null) {
    throw new UsageError('fork --max-turns goes with --message (the new run keeps the MAX_TURNS of its parent otherwise; a resume takes --max-turns).');
  }
  return { command: 'fork', dir, at: values.number('at'), to, message, maxTurns: values.number('max-turns'), fleetRun, databaseUrl, toRun, json: values.flag('json') };
}

function vizArgs(dir: string, values: OptionValues): VizArgs {
  const stately = values.flag('stately');
  if (stately && (values.text('out') !== null || values.flag('open'))) {
    throw new UsageError('--stately prints the machine to stdout; it takes no --out or --open (redirect it: > agent-loop.stately.js).');
  }
  return { command: 'viz', dir, out: values.text('out'), open: values.flag('open'), stately };
}

function usageOf(command: CommandSpec): string {
  return ['durable-agent', command.name, ...command.words, ...(command.arguments ?? []).map((arg) => arg.name)].join(' ');
}

function helpHint(command: CommandSpec): string {
  return `durable-agent ${command.name} --help`;
}
