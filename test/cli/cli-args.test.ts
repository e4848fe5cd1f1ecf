/**
 * The command line's parser and help, as pure functions: every rule of the option table, every
 * range edge, and help that lists exactly what the parser accepts.
 */
import { describe, expect, it } from 'vitest';
import { type CliArgs, parseArgs, UsageError } from '../../src/cli/args.ts';
import { type AnyCommandSpec as CommandSpec, COMMANDS, type OptionSpec } from '../../src/cli/command-table.ts';
import { flagOf } from '../../src/cli/options/option.ts';
import { claudeOptions } from '../../src/cli/options/model.ts';
import { formatDuration } from '../../src/cli/duration.ts';
import { commandHelp, mainHelp } from '../../src/cli/help.ts';
import { COMMAND_INDEX, commandsFor } from '../../src/cli/command-index.ts';
import { parseCommandLine } from '../../src/cli/parse-command-line.ts';
import { readsFleet } from '../../src/cli/reads-fleet.ts';
import { DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS } from '../../src/model/anthropic-model.ts';
import { DEFAULT_MAX_TOKENS, DEFAULT_MAX_TURNS } from '../../src/runtime/run-api.ts';
import { DEFAULT_LEASE_MS } from '../../src/store/pg/pg-store.ts';
import { DEFAULT_TOOL_TIMEOUT_MS } from '../../src/tools/execute-call.ts';

const CWD = '/work/here';

/** What a command needs besides the option under test, so that only that option decides. */
const REQUIRED: Record<string, string[]> = {
  run: ['--model', 'claude-sonnet-4-5', '--task', 'do it'],
  db: ['migrate'],
  submit: ['demo'],
  approve: ['toolu_01'],
  deny: ['toolu_01', '--reason', 'not now'],
  answer: ['toolu_01', 'yes'],
  signal: ['deploy-done'],
  prune: ['--keep', '1'],
  unpause: ['--run', 'run-1'],
  raise: ['--run', 'run-1', '--max-turns', '5'],
  result: ['--run', 'run-1'],
  drill: ['--agents', 'agents.mjs', '--replies-file', 'replies.json'],
  replay: ['--agents', 'agents.mjs', '--from-run', 'run-1'],
  fork: ['--to', 'new-dir'],
  schedule: ['add', '--agent', 'billing', '--cron', '0 9 * * 1-5', '--task', 'do it'],
  tenant: ['set', 'acme', '--weight', '2'],
  token: ['add', 'acme-ops', '--role', 'read', '--tokens-file', 'tokens.json'],
  keys: ['rotate'],
};

function parse(...argv: string[]): CliArgs {
  return parseArgs(argv, CWD);
}

function refusal(...argv: string[]): string {
  try {
    parse(...argv);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as UsageError).message;
  }
  throw new Error(`accepted: ${argv.join(' ')}`);
}

/** A command line with one option set to `value`, and whatever else the command needs. */
function withOption(command: CommandSpec, option: OptionSpec, value?: string): string[] {
  const needed = [...(REQUIRED[command.name] ?? [])];
  const name = flagOf(option);
  if (name === 'task' || name === 'model') {
    const at = needed.indexOf(`--${name}`);
    if (at !== -1) needed.splice(at, 2);
  }
  // The demo's Claude options are for a real model (--model).
  if (command.name === 'demo' && claudeOptions.some((o) => flagOf(o) === name)) needed.push('--model', 'm');
  if (['accept-lost-record', 'allow-tool-change', 'replace-decision-policy', 'message', 'allow-request-change'].includes(name) && command.name !== 'fork') {
    needed.push('--resume');
    const task = needed.indexOf('--task');
    if (task !== -1) needed.splice(task, 2);
  }
  if (name === 'full' && command.name === 'history') needed.push('--transcript');
  // serve --agents drives a folder's runs: it goes with --dir.
  if (name === 'agents' && command.name === 'serve') needed.push('--dir', 'project');
  if (name === 'resume' && command.name === 'run') needed.splice(needed.indexOf('--task'), 2);
  // run --agent picks an agent of the module --agents names.
  if (name === 'agent' && command.name === 'run') needed.push('--agents', 'agents.mjs');
  if (name === 'reason') needed.splice(needed.indexOf('--reason'), 2);
  if (name === 'keep' && command.name === 'prune') needed.splice(needed.indexOf('--keep'), 2);
  // prune --shred --run ID: one sealed run's key, in place of a rule.
  if (command.name === 'prune' && ['shred', 'run'].includes(name)) needed.splice(0, needed.length, ...(name === 'shred' ? ['--run', 'run-1'] : ['--shred']));
  // pending/approve/deny/answer: --database-url goes with --run ID (a fleet run).
  if (name === 'database-url' && ['pending', 'approve', 'deny', 'answer', 'signal', 'cancel', 'pause'].includes(command.name)) needed.push('--run', 'run-1');
  if (name === 'run' && ['unpause', 'result'].includes(command.name)) needed.length = 0;
  // raise: the option under test in place of the one it needs of the same name.
  if (command.name === 'raise' && needed.includes(`--${name}`)) needed.splice(needed.indexOf(`--${name}`), 2);
  // fork: a fleet run (--run) instead of --to; --max-turns goes with --message.
  if (command.name === 'fork' && ['run', 'database-url', 'to-run'].includes(name)) needed.splice(0, 2, ...(name === 'run' ? [] : ['--run', 'run-1']));
  if (command.name === 'fork' && name === 'max-turns') needed.push('--message', 'more');
  if (command.name === 'fork' && name === 'to') needed.splice(0, 2);
  // worker --webhook-include-content is about the events sent to --webhook-url.
  if (command.name === 'worker' && name === 'webhook-include-content') needed.push('--webhook-url', 'https://hooks.example.com/a');
  if (command.name === 'replay' && ['agents', 'from-run'].includes(name)) needed.splice(needed.indexOf(`--${name}`), 2);
  // drill: the replies of a stored run in place of a script.
  if (command.name === 'drill' && ['agents', 'replies-file'].includes(name)) needed.splice(needed.indexOf(`--${name}`), 2);
  if (command.name === 'drill' && name === 'from-run') needed.splice(needed.indexOf('--replies-file'), 2);
  // submit: an agent's run (--agent NAME --task TEXT) in place of demo runs, for the options only it takes.
  if (command.name === 'submit' && ['agent', 'task', 'run', 'tenant', 'allow-unknown-agent'].includes(name)) {
    needed.splice(0, needed.length, ...['--agent', 'billing', '--task', 'do it'].filter((_, at, all) => all[at - (at % 2)] !== `--${name}`));
  }
  // schedule add: the option under test in place of the one it needs of the same name.
  if (['schedule', 'tenant', 'token'].includes(command.name) && needed.includes(`--${name}`)) needed.splice(needed.indexOf(`--${name}`), 2);
  const given = option.type === 'boolean' ? [`--${name}`] : [`--${name}`, value ?? sampleValue(option)];
  return [command.name, ...needed, ...given];
}

/** Every number and text in parsed args, however deep its group put it. */
function leaves(value: unknown): unknown[] {
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(leaves);
  return [value];
}

/** Values the Claude options take (each its own shape). */
const CLAUDE_SAMPLES: Record<string, string> = {
  apiVersion: '2023-06-01',
  thinking: '2048',
  toolChoice: 'auto',
  serviceTier: 'auto',
  price: 'input=3,output=15,cache-read=0.3,cache-write=3.75',
};

function sampleValue(option: OptionSpec): string {
  if (option.type === 'duration') return formatDuration(option.max!);
  if (option.key === 'input') return '{"text":"edited"}';
  if (option.key === 'data') return '{"version":"1.4.2"}';
  if (option.key === 'compact') return 'client';
  if (option.key === 'state') return 'waiting';
  if (option.key === 'lang') return 'pt';
  if (option.key === 'tools') return 'text-editor,memory';
  if (option.key === 'overlap') return 'allow';
  if (option.key === 'role') return 'steer';
  if (option.key === 'corsOrigin') return 'https://app.example.com';
  if (option.key in CLAUDE_SAMPLES) return CLAUDE_SAMPLES[option.key]!;
  if (option.type === 'ratio') return String(option.min);
  return option.type === 'integer' || option.type === 'decimal' ? String(option.min) : 'some-value';
}

const everyOption = COMMANDS.flatMap((command) => command.options.map((option) => [command.name, flagOf(option), command, option] as const));
const integerOptions = everyOption.filter(([, , , option]) => option.type === 'integer');
const durationOptions = everyOption.filter(([, , , option]) => option.type === 'duration');

describe('help and parser come from one table', () => {
  it.each(COMMANDS.map((command) => [command.name, command] as const))('`%s --help` shows its usage, every option of its table and an example', (name, command) => {
    const help = commandHelp(command);
    const flat = help.replace(/\s+/g, ' ');
    expect(help).toMatch(new RegExp(`^Usage: durable-agent ${name}\\b`));
    for (const option of command.options) {
      expect(help).toMatch(new RegExp(`^ {2}--${flagOf(option)}${option.type === 'boolean' ? '' : ` ${option.value}`} +\\S`, 'm'));
      if (option.type === 'integer' || option.type === 'decimal' || option.type === 'ratio') expect(flat).toContain(`(${option.min} to ${option.max}`);
      if (option.type === 'duration') expect(flat).toContain(`(${formatDuration(option.min!)} to ${formatDuration(option.max!)}`);
    }
    expect(help).toMatch(/Examples?:\n {2}.*durable-agent /);
    expect(help).toContain('-h, --help');
    for (const line of help.split('\n')) expect(line.length).toBeLessThanOrEqual(110);
  });

  it.each(everyOption.map(([command, option, c, o]) => [`${command} --${option}`, c, o] as const))('the parser accepts %s', (_, command, option) => {
    expect(() => parse(...withOption(command, option))).not.toThrow();
  });

  it('refuses an option of another command, naming the options it has', () => {
    expect(refusal('status', '--resume')).toContain('Unknown option --resume for status. Its options: --dir --run --database-url --json');
  });

  it('lists every command, one line each, in the main help', () => {
    const help = mainHelp('9.9.9');
    expect(help).toContain('durable-agent 9.9.9');
    for (const command of COMMANDS) expect(help).toMatch(new RegExp(`^ {2}${[command.name, ...command.words].join(' ')} +\\S.*$`, 'm'));
    expect(help).toContain('-v, --version');
  });

  it('shows as defaults the values the runtime really uses', () => {
    const shown = (command: string, option: string) => {
      const spec = COMMANDS.find((c) => c.name === command)!.options.find((o) => flagOf(o) === option)!;
      return (spec.defaultText ?? String(spec.default)).split(';')[0];
    };
    expect(shown('demo', 'max-turns')).toBe(String(DEFAULT_MAX_TURNS));
    expect(shown('run', 'max-tokens')).toBe(String(DEFAULT_MAX_TOKENS));
    expect(shown('run', 'max-retries')).toBe(String(DEFAULT_MAX_RETRIES));
    expect(shown('run', 'request-timeout')).toBe(formatDuration(DEFAULT_TIMEOUT_MS));
    expect(shown('worker', 'lease')).toBe(formatDuration(DEFAULT_LEASE_MS));
    expect(shown('run', 'tool-timeout')).toBe(formatDuration(DEFAULT_TOOL_TIMEOUT_MS));
  });
});

describe('the command index: the CLI loads the declaration of the command it runs, and only that one', () => {
  it('names every command of the table, in its order, with its old names', () => {
    expect(COMMAND_INDEX.map((entry) => [entry.name, entry.aliases ?? []])).toEqual(COMMANDS.map((command) => [command.name, command.aliases ?? []]));
  });

  it.each(COMMAND_INDEX.map((entry) => [entry.name, entry] as const))('`%s` loads the very declaration of the table', async (name, entry) => {
    expect(await entry.load()).toBe(COMMANDS.find((command) => command.name === name));
  });

  it('finds the command a line runs, or the one `help` is asked about, by its name or an old one; no other', async () => {
    const status = await commandsFor(['status', '--json']);
    expect(status.find('status')?.name).toBe('status');
    expect(status.find('history')).toBeUndefined();
    expect((await commandsFor(['help', 'list'])).find('list')?.name).toBe('list');
    expect((await commandsFor(['resume', '--run', 'run-1'])).find('resume')?.name).toBe('unpause');
    const none = await commandsFor(['stauts']);
    expect(none.find('stauts')).toBeUndefined();
    expect(none.names).toEqual(COMMANDS.map((command) => command.name));
  });

  const lines: string[][] = [
    [],
    ['--help'],
    ['--version'],
    ['help', 'history'],
    ['status', '--dir', 'runs/a', '--json'],
    ['history', '--transcript', '--full'],
    ['list', '--state', 'done'],
    ['pending', '--json'],
    ['resume', '--run', 'run-1'],
    ['deny', 'toolu_01', '--reason', 'not now'],
    ...COMMANDS.map((command) => [command.name, '--help']),
  ];
  it.each(lines.map((argv) => [argv.join(' '), argv] as const))('`%s` parses as with every command loaded', async (_, argv) => {
    const notes: string[] = [];
    const everyNote: string[] = [];
    expect(parseCommandLine(argv, await commandsFor(argv), CWD, (note) => notes.push(note))).toEqual(parseArgs(argv, CWD, (note) => everyNote.push(note)));
    expect(notes).toEqual(everyNote);
  });

  it.each([['stauts'], ['help', 'stauts'], ['--dir', 'x']])('`%s` is refused in the same words', async (...argv) => {
    const words = (parse: () => unknown) => {
      try {
        parse();
      } catch (error) {
        return error instanceof UsageError ? error.message : `not a usage error: ${String(error)}`;
      }
      return 'no error';
    };
    const lazy = await commandsFor(argv);
    expect(words(() => parseCommandLine(argv, lazy, CWD))).toBe(words(() => parseArgs(argv, CWD)));
    expect(words(() => parseArgs(argv, CWD))).toMatch(/durable-agent --help|help takes one command name/);
  });
});

describe('help and version', () => {
  it('shows the main help for nothing, help, -h and --help', () => {
    for (const argv of [[], ['help'], ['-h'], ['--help']]) expect(parse(...argv)).toEqual({ command: 'help', topic: null });
  });

  it("shows a command's help for `<command> --help`, `<command> -h` and `help <command>`, whatever else is on the line", () => {
    for (const argv of [['demo', '--help'], ['demo', '-h'], ['help', 'demo'], ['demo', '--bogus', '--max-turns', 'x', '--help']]) {
      expect(parse(...argv)).toEqual({ command: 'help', topic: 'demo' });
    }
    expect(parse('db', '--help')).toEqual({ command: 'help', topic: 'db' });
  });

  it('prints the version for -v, --version and version', () => {
    for (const argv of [['-v'], ['--version'], ['version']]) expect(parse(...argv)).toEqual({ command: 'version' });
  });

  it('refuses an option before the command, and an unknown command', () => {
    expect(refusal('--dir', 'x', 'demo')).toContain('--dir is not a command');
    expect(refusal('frobnicate')).toContain('Unknown command "frobnicate"');
    expect(refusal('help', 'frobnicate')).toContain('help takes one command name');
  });
});

describe('values', () => {
  it('refuses a flag as the value of an option that expects one (`--dir --plain` is not a directory named --plain)', () => {
    expect(refusal('demo', '--dir', '--plain')).toContain('--dir needs a value, but the next word is "--plain", an option');
    expect(refusal('run', '--model', '--task', 'x')).toContain('--model needs a value');
    expect(refusal('demo', '--max-turns', '--resume')).toContain('--max-turns needs a value');
    expect(refusal('demo', '--dir', '--')).toContain('--dir needs a value');
  });

  it('takes a value that starts with a dash when it is written --option=value', () => {
    expect(parse('demo', '--dir=--plain')).toMatchObject({ dir: '--plain', plain: false });
    expect(parse('demo', '--dir', '-')).toMatchObject({ dir: '-' });
  });

  it('refuses an option with no value at the end, an empty value, and a value on a flag', () => {
    expect(refusal('demo', '--dir')).toBe('--dir needs a value: --dir DIR.');
    expect(refusal('demo', '--dir=')).toContain('not an empty one');
    expect(refusal('demo', '--plain=yes')).toBe('--plain takes no value (got "yes").');
  });

  it('refuses a repeated option, flag or value', () => {
    expect(refusal('demo', '--plain', '--plain')).toBe('--plain is given twice: give it once.');
    expect(refusal('demo', '--dir', 'a', '--dir', 'b')).toBe('--dir is given twice: give it once.');
    expect(refusal('demo', '--max-turns=3', '--max-turns', '3')).toContain('--max-turns is given twice');
  });

  it('ends options at `--`: what follows is an argument, not an option', () => {
    expect(refusal('demo', '--', '--plain')).toContain('Unexpected argument "--plain" for demo');
    expect(parse('db', '--', 'migrate')).toEqual({ command: 'db', action: 'migrate', databaseUrl: null });
    expect(parse('submit', '--count', '2', '--', 'demo')).toMatchObject({ command: 'submit', count: 2 });
    // After `--`, even --help is an argument: the demo takes none.
    expect(refusal('demo', '--', '--help')).toContain('Unexpected argument "--help" for demo');
  });

  it('needs the words of db migrate and submit demo, and refuses others', () => {
    expect(refusal('db')).toContain('db needs: durable-agent db migrate');
    expect(refusal('db', 'migrat')).toContain('Unexpected argument "migrat" for db (expected: durable-agent db migrate)');
    expect(refusal('demo', 'extra')).toContain('Unexpected argument "extra" for demo');
  });
});

describe('numbers: a whole number within the range in the table, or exit 2 with the range', () => {
  it.each(integerOptions.map(([command, name, c, o]) => [`${command} --${name}`, c, o] as const))('%s: both ends are accepted, one past either end is refused', (_, command, option) => {
    const numbers = (args: CliArgs) => leaves(args);
    expect(numbers(parse(...withOption(command, option, String(option.min))))).toContain(option.min);
    expect(numbers(parse(...withOption(command, option, String(option.max))))).toContain(option.max);
    const range = `--${flagOf(option)} takes a whole number from ${option.min} to ${option.max}, not`;
    if (option.min! > 0) expect(refusal(...withOption(command, option, String(option.min! - 1)))).toContain(range);
    expect(refusal(...withOption(command, option, String(option.max! + 1)))).toContain(range);
    expect(refusal(...withOption(command, option, '9'.repeat(400)))).toContain(range);
    for (const junk of ['1.5', '1e3', '0x10', ' 5', 'many']) expect(refusal(...withOption(command, option, junk))).toContain(range);
  });

  it.each(durationOptions.map(([command, name, c, o]) => [`${command} --${name}`, c, o] as const))('%s: a duration, both ends accepted in any unit, one millisecond past either end refused', (_, command, option) => {
    const min = option.min!;
    const max = option.max!;
    expect(leaves(parse(...withOption(command, option, formatDuration(min))))).toContain(min);
    expect(leaves(parse(...withOption(command, option, `${max}ms`)))).toContain(max);
    expect(leaves(parse(...withOption(command, option, formatDuration(max))))).toContain(max);
    const range = `--${flagOf(option)} takes a duration from ${formatDuration(min)} to ${formatDuration(max)}: a whole number and ms, s, m, h or d (500ms, 90s, 15m, 2h, 3d), not`;
    if (min > 0) expect(refusal(...withOption(command, option, `${min - 1}ms`))).toContain(range);
    expect(refusal(...withOption(command, option, `${max + 1}ms`))).toContain(range);
    for (const junk of ['1.5s', '15 m', '15M', '1h30m', 'soon', `${'9'.repeat(40)}s`]) expect(refusal(...withOption(command, option, junk))).toContain(range);
    // Only a flag that once took bare milliseconds still does (with a note); any other wants the unit.
    if (!option.bareMilliseconds) expect(refusal(...withOption(command, option, String(max)))).toContain(range);
  });

  it('a decimal option (--max-cost-usd): both ends and decimals accepted; past either end, a sign, an exponent or junk refused', () => {
    for (const command of ['demo', 'run'] as const) {
      const spec = COMMANDS.find((c) => c.name === command)!;
      const option = spec.options.find((o) => flagOf(o) === 'max-cost-usd')!;
      expect(option.type).toBe('decimal');
      for (const [text, value] of [[String(option.min), option.min], [String(option.max), option.max], ['2.50', 2.5], ['7', 7]] as const) {
        expect(parse(...withOption(spec, option, text))).toMatchObject({ budget: { maxCostUsd: value } });
      }
      const range = `--max-cost-usd takes a number from ${option.min} to ${option.max} (digits and at most one ".", e.g. 2.50), not`;
      for (const junk of ['0', '0.00001', String(option.max! + 0.01), '1e3', '1.2.3', '.5', '0x10', ' 5', 'many', '9'.repeat(400)]) {
        expect(refusal(...withOption(spec, option, junk)), junk).toContain(range);
      }
    }
    expect(refusal('demo', '--max-cost-usd=-1')).toContain('--max-cost-usd takes a number from');
  });

  it('passes the number through to the args, and a negative number is refused like any other', () => {
    expect(parse('demo', '--max-turns', '100000', '--pace', '600000', '--timeout', '1000')).toMatchObject({
      maxTurns: 100_000,
      paceMs: 600_000,
      request: { requestTimeoutMs: 1000, maxRetries: undefined },
    });
    expect(refusal('demo', '--pace=-1')).toContain('--pace takes a duration from 0s to 10m: a whole number and ms, s, m, h or d (500ms, 90s, 15m, 2h, 3d), not "-1"');
  });

  it('refuses the values the issue found: 400 nines for --max-turns, --timeout 0, --pace 99999999999', () => {
    expect(refusal('demo', '--max-turns', '9'.repeat(400))).toMatch(/^--max-turns takes a whole number from 1 to 100000, not "9{20}…9{10} \(400 characters\)"\.$/);
    expect(refusal('run', '--model', 'm', '--task', 't', '--timeout', '0')).toBe('--timeout takes a duration from 1s to 1h: a whole number and ms, s, m, h or d (500ms, 90s, 15m, 2h, 3d), not "0".');
    expect(refusal('demo', '--pace', '99999999999')).toBe('--pace takes a duration from 0s to 10m: a whole number and ms, s, m, h or d (500ms, 90s, 15m, 2h, 3d), not "99999999999".');
  });

  it('fills in the defaults of the table and leaves the others for the run to decide', () => {
    expect(parse('demo')).toMatchObject({ paceMs: 0, jitterMs: 0, maxTurns: undefined, maxTokens: undefined, request: { maxRetries: undefined, requestTimeoutMs: undefined } });
    expect(parse('submit', 'demo')).toMatchObject({ count: 1, paceMs: 0, jitterMs: 0, maxTurns: undefined });
    expect(parse('worker')).toMatchObject({ runConcurrency: 1, leaseMs: undefined, pollIntervalMs: undefined });
  });
});

describe('demo and run', () => {
  it('--message goes with --resume and is never empty', () => {
    expect(parse('run', '--model', 'm', '--resume', '--message', 'and then?')).toMatchObject({ resume: true, message: 'and then?' });
    expect(parse('demo', '--resume')).toMatchObject({ message: undefined });
    expect(refusal('demo', '--message', 'x')).toContain('--message continues a finished run: add --resume');
    expect(refusal('run', '--model', 'm', '--task', 't', '--message', 'x')).toContain('add --resume');
    expect(refusal('demo', '--resume', '--message', ' ')).toContain('--message is empty');
  });

  it('parses the demo with its defaults', () => {
    expect(parse('demo')).toEqual({
      command: 'demo',
      dir: CWD,
      runId: null,
      resume: false,
      message: undefined,
      fresh: false,
      takeOver: false,
      acceptLostRecord: false,
      allowToolChange: false,
      replaceDecisionPolicy: false,
      model: undefined,
      maxTurns: undefined,
      maxTokens: undefined,
      plain: false,
      verbose: false,
      listCrashPoints: false,
      verify: true,
      paceMs: 0,
      jitterMs: 0,
      request: { maxRetries: undefined, requestTimeoutMs: undefined },
      traceContent: false,
      approval: { requireApproval: undefined, wait: undefined, decisionTimeoutMs: undefined, allowQuestions: false },
      budget: undefined,
      compaction: undefined,
      clearToolUses: undefined,
    });
  });

  it('passes --trace-content (was --otel-content) into the args of demo, run and worker', () => {
    expect(parse('demo', '--otel-content')).toMatchObject({ traceContent: true });
    expect(parse('run', '--model', 'm', '--task', 't', '--trace-content')).toMatchObject({ traceContent: true });
    expect(parse('worker', '--otel-content')).toMatchObject({ traceContent: true });
    expect(parse('worker')).toMatchObject({ traceContent: false });
  });

  it("passes --webhook-include-content into the worker's args, and refuses it without --webhook-url", () => {
    expect(parse('worker', '--webhook-url', 'https://hooks.example.com/a', '--webhook-include-content')).toMatchObject({ webhookUrl: 'https://hooks.example.com/a', webhookIncludeContent: true });
    expect(parse('worker', '--webhook-url', 'https://hooks.example.com/a')).toMatchObject({ webhookIncludeContent: false });
    expect(() => parse('worker', '--webhook-include-content')).toThrow(/give --webhook-url URL too/);
  });

  it('passes --take-over, --accept-lost-record and --allow-tool-change into the args of demo and run', () => {
    expect(parse('demo', '--resume', '--take-over', '--accept-lost-record', '--allow-tool-change')).toMatchObject({
      resume: true,
      takeOver: true,
      acceptLostRecord: true,
      allowToolChange: true,
    });
    expect(parse('run', '--model', 'm', '--resume', '--take-over', '--accept-lost-record', '--allow-tool-change')).toMatchObject({
      command: 'run',
      takeOver: true,
      acceptLostRecord: true,
      allowToolChange: true,
    });
    expect(parse('demo', '--take-over')).toMatchObject({ resume: false, takeOver: true });
  });

  it('refuses --accept-lost-record and --allow-tool-change without --resume', () => {
    expect(refusal('demo', '--accept-lost-record')).toContain('--accept-lost-record only applies to --resume');
    expect(refusal('run', '--model', 'm', '--task', 't', '--allow-tool-change')).toContain('--allow-tool-change only applies to --resume');
  });

  it('keeps the rules of run: a task or --resume, and a model', () => {
    expect(refusal('run', '--model', 'm')).toContain('run needs --task');
    expect(refusal('run', '--task', 't')).toContain('run needs --model NAME');
    expect(refusal('run', '--model', 'm', '--task', 't', '--resume')).toContain('--task is stored with the run');
    expect(refusal('demo', '--resume', '--fresh')).toContain('contradict');
    expect(parse('run', '--model', 'm', '--task', 't', '--dir', 'd', '--system', 's.txt')).toMatchObject({
      command: 'run',
      model: 'm',
      task: 't',
      dir: 'd',
      systemFile: 's.txt',
    });
  });

  it('takes your own agent with --agents FILE [--agent NAME]: no --model needed, the prompt and tools are the definition\'s', () => {
    expect(parse('run', '--agents', 'agents.mjs', '--task', 't')).toMatchObject({ command: 'run', agents: 'agents.mjs', agent: undefined, model: undefined, task: 't', runId: null });
    expect(parse('run', '--agents', 'agents.mjs', '--agent', 'billing', '--task', 't', '--run', 'acme', '--model', 'claude-sonnet-5-5')).toMatchObject({
      agents: 'agents.mjs',
      agent: 'billing',
      runId: 'acme',
      model: 'claude-sonnet-5-5',
    });
    expect(parse('run', '--agents', 'agents.mjs', '--resume', '--run', 'acme')).toMatchObject({ agents: 'agents.mjs', resume: true, task: undefined });
    expect(refusal('run', '--agents', 'agents.mjs')).toContain('run needs --task');
    expect(refusal('run', '--agent', 'billing', '--task', 't')).toBe('--agent NAME picks an agent of the module --agents FILE names: give --agents FILE too.');
    for (const [flag, value, what] of [['--system-file', 's.txt', 'system prompt'], ['--tools', 'bash', 'tools'], ['--mcp-config-file', '.mcp.json', 'tools']] as const) {
      expect(refusal('run', '--agents', 'agents.mjs', '--task', 't', flag, value)).toBe(`${flag} is not for --agents: the agent's definition gives its ${what}. Change the definition in the module, or drop ${flag}.`);
    }
    expect(refusal('run', '--task', 't')).toContain('or --agents FILE for your own agent');
  });
});

describe('run --tool-concurrency', () => {
  it('passes N (1 to 64) into the args of run; absent, the run decides (4)', () => {
    expect(parse('run', '--model', 'm', '--task', 't', '--tool-concurrency', '8')).toMatchObject({ toolConcurrency: 8 });
    expect(parse('run', '--model', 'm', '--task', 't')).toMatchObject({ toolConcurrency: undefined });
    expect(refusal('run', '--model', 'm', '--task', 't', '--tool-concurrency', '0')).toBe('--tool-concurrency takes a whole number from 1 to 64, not "0".');
    expect(refusal('run', '--model', 'm', '--task', 't', '--tool-concurrency', '65')).toBe('--tool-concurrency takes a whole number from 1 to 64, not "65".');
  });

  it('streams replies unless --no-stream', () => {
    expect(parse('run', '--model', 'm', '--task', 't')).toMatchObject({ stream: true });
    expect(parse('run', '--model', 'm', '--task', 't', '--no-stream')).toMatchObject({ stream: false });
  });
});

describe('run --tools', () => {
  it('names the tool sets, each once, in the order given; absent, the run decides (the file tools, or a resumed run’s own)', () => {
    expect(parse('run', '--model', 'm', '--task', 't', '--tools', 'text-editor,memory,bash')).toMatchObject({ tools: ['text-editor', 'memory', 'bash'] });
    expect(parse('run', '--model', 'm', '--task', 't', '--tools', 'memory, files,memory')).toMatchObject({ tools: ['memory', 'files'] });
    expect(parse('run', '--model', 'm', '--task', 't')).toMatchObject({ tools: undefined });
    expect(parse('run', '--resume', '--tools', 'bash')).toMatchObject({ tools: ['bash'] });
  });

  it('refuses a set it does not have, naming the ones it has', () => {
    expect(refusal('run', '--model', 'm', '--task', 't', '--tools', 'text-editor,shell')).toBe(
      '--tools takes files, text-editor, memory, bash, wait, separated by commas (e.g. --tools text-editor,memory), not "shell".',
    );
    expect(refusal('run', '--model', 'm', '--task', 't', '--tools', 'files,')).toContain('not "".');
  });
});

describe('status: a run in a directory, or a fleet', () => {
  it('reads the fleet with --database-url, or with DURABLE_AGENT_DATABASE_URL and no --dir; --dir always means the file run', () => {
    const env = { DURABLE_AGENT_DATABASE_URL: 'postgresql://db/x' };
    const status = (...argv: string[]) => parse('status', ...argv) as Extract<CliArgs, { command: 'status' }>;
    expect(readsFleet(status(), {})).toBe(false);
    expect(readsFleet(status(), env)).toBe(true);
    expect(readsFleet(status('--dir', '.'), env)).toBe(false);
    expect(readsFleet(status('--database-url', 'postgresql://db/y'), {})).toBe(true);
    expect(status('--dir', 'somewhere')).toMatchObject({ dir: 'somewhere', dirGiven: true, databaseUrl: null });
    expect(status()).toMatchObject({ dir: CWD, dirGiven: false });
  });

  it('refuses --dir with --database-url', () => {
    expect(refusal('status', '--dir', '.', '--database-url', 'postgresql://db/x')).toContain('either the run in --dir or the fleet at --database-url');
  });

  it('refuses --stately with --out or --open', () => {
    expect(refusal('viz', '--stately', '--open')).toContain('--stately prints the machine to stdout');
  });
});

describe('a person in the loop: --require-approval, --wait, --no-wait, --decision-timeout, --allow-questions', () => {
  const approval = (...argv: string[]) => (parse('demo', ...argv) as Extract<CliArgs, { command: 'demo' }>).approval;

  it('takes tool names separated by commas, or side-effects alone', () => {
    expect(approval('--require-approval', 'write_report')).toMatchObject({ requireApproval: ['write_report'] });
    expect(approval('--require-approval', 'write_report,count_words,write_report')).toMatchObject({ requireApproval: ['write_report', 'count_words'] });
    expect(approval('--require-approval', 'side-effects')).toMatchObject({ requireApproval: 'side-effects' });
    expect(refusal('demo', '--require-approval', 'side-effects,write_report')).toContain('side-effects already covers');
    expect(refusal('demo', '--require-approval', 'write_report,')).toContain('--require-approval takes tool names separated by commas');
    expect(refusal('demo', '--require-approval', '../x')).toContain('--require-approval takes tool names');
  });

  it('waits when stdout is a terminal unless told: --wait always, --no-wait never, not both', () => {
    expect(approval()).toEqual({ requireApproval: undefined, wait: undefined, decisionTimeoutMs: undefined, allowQuestions: false });
    expect(approval('--wait')).toMatchObject({ wait: true });
    expect(approval('--no-wait')).toMatchObject({ wait: false });
    expect(refusal('demo', '--wait', '--no-wait')).toContain('--wait and --no-wait contradict each other');
  });

  it('takes a duration from 1s to 90d as a whole number and a unit, and refuses anything else with the range', () => {
    const cases: Array<[string, number]> = [['90s', 90_000], ['15m', 900_000], ['2h', 7_200_000], ['3d', 259_200_000], ['1s', 1_000], ['90d', 7_776_000_000]];
    for (const [text, ms] of cases) expect(approval('--decision-timeout', text)).toMatchObject({ decisionTimeoutMs: ms });
    for (const junk of ['0s', '91d', '2161h', '15', '1.5h', '15 m', '15M', '1h30m', 'soon', `${'9'.repeat(40)}s`]) {
      expect(refusal('demo', '--decision-timeout', junk)).toContain('--decision-timeout takes a duration from 1s to 90d: a whole number and ms, s, m, h or d (500ms, 90s, 15m, 2h, 3d), not');
    }
    expect((parse('run', '--model', 'm', '--task', 't', '--decision-timeout', '2h') as Extract<CliArgs, { command: 'run' }>).approval.decisionTimeoutMs).toBe(7_200_000);
  });

  it('gives run --allow-questions, and not the demo', () => {
    expect(parse('run', '--model', 'm', '--task', 't', '--allow-questions')).toMatchObject({ approval: { allowQuestions: true } });
    expect(parse('run', '--model', 'm', '--task', 't')).toMatchObject({ approval: { allowQuestions: false, requireApproval: undefined } });
    expect(refusal('demo', '--allow-questions')).toContain('Unknown option --allow-questions for demo');
  });
});

describe('pending, approve, deny, answer', () => {
  it('parses each with its call id and values', () => {
    expect(parse('pending', '--dir', 'd', '--json')).toEqual({ command: 'pending', dir: 'd', dirGiven: true, json: true, fleetRun: null, fileRun: null, databaseUrl: null });
    expect(parse('pending', '--run', 'r1', '--database-url', 'postgresql://h/db')).toMatchObject({ fleetRun: 'r1', databaseUrl: 'postgresql://h/db' });
    expect(parse('approve', 'toolu_01', '--note', 'ok', '--by', 'ana')).toEqual({
      command: 'approve',
      dir: CWD,
      dirGiven: false,
      fleetRun: null,
      fileRun: null,
      databaseUrl: null,
      callId: 'toolu_01',
      note: 'ok',
      reason: null,
      text: null,
      by: 'ana',
    });
    expect(parse('approve', '--dir', 'd', 'toolu_01', '--input', '{"text":"short"}')).toMatchObject({ callId: 'toolu_01', input: { text: 'short' } });
    expect(parse('deny', 'toolu_01', '--reason', 'not today')).toMatchObject({ command: 'deny', callId: 'toolu_01', reason: 'not today', by: null });
    expect(parse('answer', 'toolu_01', 'Use the 2024 figures.')).toMatchObject({ command: 'answer', callId: 'toolu_01', text: 'Use the 2024 figures.' });
    expect(parse('answer', 'toolu_01', '--', '-5 degrees')).toMatchObject({ text: '-5 degrees' });
  });

  it('needs the call id (and the text of an answer, the reason of a denial), and takes nothing more', () => {
    expect(refusal('approve')).toContain('approve needs CALL_ID');
    expect(refusal('answer', 'toolu_01')).toContain('answer needs TEXT');
    expect(refusal('answer', 'toolu_01', '  ')).toContain('answer needs a TEXT that is not empty');
    expect(refusal('deny', 'toolu_01')).toContain('deny needs --reason TEXT');
    expect(refusal('approve', 'toolu_01', 'toolu_02')).toContain('Unexpected argument "toolu_02" for approve (expected: durable-agent approve CALL_ID)');
    expect(refusal('pending', 'toolu_01')).toContain('Unexpected argument "toolu_01" for pending');
  });

  it('refuses a call id that could be a path, before anything reads or writes', () => {
    for (const id of ['../x', 'a/b', 'toolu.01', '..', 'x'.repeat(129)]) expect(refusal('approve', id)).toContain('is not a call id');
  });

  it('refuses --input that is not a JSON object, saying what to give', () => {
    expect(refusal('approve', 'toolu_01', '--input', '{text: 1}')).toMatch(/^--input is not JSON \(.*\): give the whole input as a JSON object/);
    expect(refusal('approve', 'toolu_01', '--input', '[1]')).toContain('--input must be a JSON object (a tool\'s input), not an array');
    expect(refusal('approve', 'toolu_01', '--input', '"x"')).toContain('not "x"');
  });

  it('shows the arguments in the help', () => {
    const help = commandHelp(COMMANDS.find((c) => c.name === 'answer')!);
    expect(help).toMatch(/^Usage: durable-agent answer \[--dir DIR\] CALL_ID TEXT/);
    expect(help).toMatch(/^Arguments:\n {2}CALL_ID +the tool_use_id/m);
  });
});

describe('signal', () => {
  it('parses the event, its data, its id and who sends it, for a run in a directory or of the fleet', () => {
    expect(parse('signal', 'deploy-done', '--data', '{"version":"1.4.2"}', '--id', 'build-7', '--by', 'ci')).toEqual({
      command: 'signal',
      dir: CWD,
      dirGiven: false,
      fleetRun: null,
      fileRun: null,
      databaseUrl: null,
      name: 'deploy-done',
      data: { version: '1.4.2' },
      id: 'build-7',
      by: 'ci',
    });
    expect(parse('signal', '--dir', 'd', 'go')).toMatchObject({ name: 'go', data: null, id: null, by: null });
    expect(parse('signal', 'go', '--data', '"text"')).toMatchObject({ data: 'text' });
    expect(parse('signal', '--run', 'r1', '--database-url', 'postgresql://h/db', 'paid')).toMatchObject({ fleetRun: 'r1', databaseUrl: 'postgresql://h/db', name: 'paid' });
  });

  it('refuses a name or an id that could be a path, and --data that is not JSON, before anything is read or written', () => {
    expect(refusal('signal')).toContain('signal needs NAME');
    for (const name of ['../x', 'a/b', 'a.b', 'x'.repeat(129)]) expect(refusal('signal', name)).toContain('is not an event name');
    expect(refusal('signal', 'go', '--id', 'a/b')).toContain('--id "a/b" is not a signal id');
    expect(refusal('signal', 'go', '--data', '{version: 1}')).toMatch(/^--data is not JSON \(.*\): give a JSON value/);
    expect(refusal('signal', 'go', 'more')).toContain('Unexpected argument "more" for signal');
  });
});

describe('compaction options', () => {
  it('parses --compact, --context-window and --compact-trigger, and refuses what they do not take', () => {
    expect(parse('demo', '--compact', 'client', '--context-window', '20000', '--compact-trigger', '0.7')).toMatchObject({
      compaction: { mode: 'client', contextWindow: 20_000, triggerRatio: 0.7 },
    });
    expect((parse('run', '--model', 'm', '--task', 't', '--compact', 'off') as Extract<CliArgs, { command: 'run' }>).compaction).toEqual({ mode: 'off' });
    expect(refusal('demo', '--compact', 'always')).toContain('--compact takes server, client or off, not "always"');
    for (const junk of ['0.05', '0.96', '1', '80%', 'high', '.']) expect(refusal('demo', '--compact-trigger', junk)).toContain('--compact-trigger takes a ratio from 0.1 to 0.95');
    expect(parse('demo', '--compact-trigger', '.5')).toMatchObject({ compaction: { triggerRatio: 0.5 } });
  });

  it('parses --clear-tool-uses and the --clear-* options (any of them asks for clearing); none given: no clearing', () => {
    const run = (...argv: string[]) => parse('run', '--model', 'm', '--task', 't', ...argv) as Extract<CliArgs, { command: 'run' }>;
    expect(run().clearToolUses).toBeUndefined();
    expect(run('--clear-tool-uses').clearToolUses).toEqual({});
    expect((parse('demo', '--clear-keep', '0', '--clear-trigger', '30000', '--clear-at-least', '5000', '--clear-exclude', 'read_notes, count_words', '--clear-inputs') as Extract<CliArgs, { command: 'demo' }>).clearToolUses).toEqual({
      triggerTokens: 30_000,
      keep: 0,
      clearAtLeast: 5_000,
      excludeTools: ['read_notes', 'count_words'],
      clearToolInputs: true,
    });
    expect(parse('demo', '--clear-inputs')).toMatchObject({ clearToolUses: { clearToolInputs: true } });
    expect(refusal('demo', '--clear-exclude', 'read notes;rm')).toContain('--clear-exclude-tools takes tool names separated by commas');
  });
});

describe('server tools: --web-search, --web-fetch, --code-execution', () => {
  it('reads each tool with its settings into the request options a run pins; a setting turns its tool on; none given: none', () => {
    const run = (...argv: string[]) => parse('run', '--model', 'm', '--task', 't', ...argv) as Extract<CliArgs, { command: 'run' }>;
    expect(run().claude).toBeUndefined();
    expect(run('--web-search', '--code-execution').claude?.request).toEqual({ serverTools: { webSearch: {}, codeExecution: {} } });
    expect(run('--web-search-max-uses', '5', '--web-search-blocked-domains', 'spam.example, ads.example').claude?.request).toEqual({
      serverTools: { webSearch: { maxUses: 5, blockedDomains: ['spam.example', 'ads.example'] } },
    });
    expect(run('--web-fetch', '--web-fetch-max-uses', '2', '--web-fetch-allowed-domains', 'docs.example.org/api').claude?.request).toEqual({
      serverTools: { webFetch: { maxUses: 2, allowedDomains: ['docs.example.org/api'] } },
    });
    expect(parse('demo', '--model', 'm', '--web-fetch')).toMatchObject({ claude: { request: { serverTools: { webFetch: {} } } } });
  });

  it('refuses what the API would: allowed and blocked domains together, a domain with its scheme or a space, a tool on the scripted demo model', () => {
    expect(refusal('run', '--model', 'm', '--task', 't', '--web-fetch-allowed-domains', 'a.com', '--web-fetch-blocked-domains', 'b.com')).toContain('do not go together');
    expect(refusal('run', '--model', 'm', '--task', 't', '--web-search-allowed-domains', 'https://a.com')).toContain('without a scheme');
    expect(refusal('run', '--model', 'm', '--task', 't', '--web-search-allowed-domains', 'a.com,,b.com')).toContain('without a scheme');
    expect(refusal('run', '--model', 'm', '--task', 't', '--web-search-max-uses', '0')).toContain('--web-search-max-uses');
    expect(refusal('demo', '--code-execution')).toContain('are for a real model: add --model NAME');
  });
});

describe('flags a command takes only in one of its forms are refused by their flags', () => {
  it("schedule's add-only flags, named as typed, durations without their Ms", () => {
    expect(() => parse('schedule', 'pause', '--name', 'r', '--catch-up', '2', '--decision-timeout', '5m')).toThrow(
      new UsageError('--catch-up, --decision-timeout are for schedule add.'),
    );
    expect(() => parse('schedule', 'list', '--allow-unknown-agent')).toThrow(new UsageError('--allow-unknown-agent is for schedule add.'));
  });

  it("submit --agent refuses the demo's flags by name", () => {
    expect(() => parse('submit', '--agent', 'billing', '--task', 'Invoice.', '--pace', '100ms', '--context-window', '8000')).toThrow(
      /^--pace, --context-window are for demo runs: /,
    );
  });
});
