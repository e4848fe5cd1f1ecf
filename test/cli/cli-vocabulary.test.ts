/**
 * One vocabulary: every flag follows the naming rule from its API option, every old flag and
 * command name still works with a one-line note, a parse cannot read an option its command does
 * not declare, and the options table of docs/command-line.md is the one the declarations print.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CliArgs, parseArgs } from '../../src/cli/args.ts';
import { COMMANDS, type OptionSpec } from '../../src/cli/command-table.ts';
import { formatDuration } from '../../src/cli/duration.ts';
import { command } from '../../src/cli/options/command.ts';
import { flagOf, option } from '../../src/cli/options/option.ts';
import { readOptions } from '../../src/cli/options/read-options.ts';
import { OPTIONS_TABLE_END, OPTIONS_TABLE_START, optionsTable } from '../../src/cli/options-table.ts';
import { REPO } from '../helpers/cli.ts';

const CWD = '/work/here';

/** The word an API option's group puts in front of its flag where the name alone is unclear. */
const GROUP_WORDS: Record<string, { word: string; main?: string }> = {
  compaction: { word: 'compact', main: 'mode' },
  clearToolUses: { word: 'clear' },
  mcpTools: { word: 'mcp' },
  webhook: { word: 'webhook' },
  webSearch: { word: 'web-search' },
  webFetch: { word: 'web-fetch' },
};

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}

/** The flags the rule allows for an option that sets `api` (`Group.name`, or a lone name). */
function flagsByRule(option: OptionSpec): string[] {
  const parts = option.api!.split('.');
  const name = parts.at(-1)!;
  // The group is the API option's first word, or the one just before its name (serverTools.webSearch.maxUses).
  const group = parts.length > 1 ? (GROUP_WORDS[parts.at(-2)!] ?? GROUP_WORDS[parts[0]!]) : undefined;
  let base = kebab(option.type === 'duration' ? name.replace(/Ms$/, '') : name.replace(/(?<=.)Id$/, ''));
  if (option.readsFile) base = `${base}-file`;
  const forms = [base];
  if (group) {
    if (group.main === name) forms.push(group.word);
    forms.push(base.startsWith(`${group.word}-`) ? base : `${group.word}-${base}`);
  }
  // A flag that turns a boolean API option off: --no-stream for stream: false.
  return [...forms, ...forms.map((form) => `no-${form}`)];
}

const everyOption = COMMANDS.flatMap((spec) => spec.options.map((o) => [spec.name, flagOf(o), o] as const));
const everyAlias = COMMANDS.flatMap((spec) => spec.options.flatMap((o) => (o.aliases ?? []).map((alias) => [spec.name, alias.flag, flagOf(o), o, alias] as const)));

/** What a command needs besides the option under test. */
const REQUIRED: Record<string, string[]> = {
  run: ['--model', 'm', '--task', 't'],
  submit: ['demo'],
};

function parseNoting(argv: string[]): { args: CliArgs; notes: string[] } {
  const notes: string[] = [];
  return { args: parseArgs(argv, CWD, (note) => notes.push(note)), notes };
}

function sample(option: OptionSpec): string[] {
  if (option.type === 'boolean') return [];
  if (option.type === 'duration') return [formatDuration(option.max!)];
  if (option.type === 'string') return [option.key === 'compact' ? 'client' : 'read_notes'];
  return [String(option.min)];
}

describe('one naming rule', () => {
  it.each(everyOption.filter(([, , o]) => o.api !== undefined))('%s --%s is named after its API option', (_, flag, o) => {
    expect(flagsByRule(o)).toContain(flag);
    // A duration's key says its unit, as the API's does; its flag takes a unit instead.
    if (o.type === 'duration') expect(o.key).toMatch(/Ms$/);
  });

  it('gives every time option a duration (90s, 500ms, 15m), never bare milliseconds', () => {
    for (const [name, flag, o] of everyOption) {
      if (/ms\b|milliseconds|timeout|lease|poll|pace|jitter|older/i.test(`${flag} ${o.value ?? ''}`)) expect(o.type, `${name} --${flag}`).toBe('duration');
    }
  });

  it('keeps one word for one thing: the fleet runs runs at once, a reply runs calls at once', () => {
    const flags = new Set(everyOption.map(([, flag]) => flag));
    expect(flags).toContain('run-concurrency');
    expect(flags).toContain('tool-concurrency');
    expect(flags).not.toContain('concurrency');
    // The operator pauses and unpauses; the model's pause_turn is another thing.
    expect(COMMANDS.map((c) => c.name)).toEqual(expect.arrayContaining(['pause', 'unpause']));
    expect(COMMANDS.map((c) => c.name)).not.toContain('resume');
  });

  it('declares each flag once per command, old names included', () => {
    for (const spec of COMMANDS) {
      const flags = spec.options.flatMap((o) => [flagOf(o), ...(o.aliases ?? []).map((alias) => alias.flag)]);
      expect(new Set(flags).size, spec.name).toBe(flags.length);
      const keys = spec.options.map((o) => o.key);
      expect(new Set(keys).size, spec.name).toBe(keys.length);
    }
  });
});

describe('old names still work, each with a one-line note', () => {
  it.each(everyAlias)('%s --%s is --%s', (name, old, current, o, alias) => {
    const value = alias.bareMilliseconds ? [String(o.max)] : sample(o);
    const before = parseNoting([name, ...(REQUIRED[name] ?? []), `--${old}`, ...value]);
    const now = parseNoting([name, ...(REQUIRED[name] ?? []), `--${current}`, ...(alias.bareMilliseconds ? [`${o.max}ms`] : value)]);
    expect(before.args).toEqual(now.args);
    expect(now.notes).toEqual([]);
    expect(before.notes[0]).toBe(`[deprecated] --${old} is now --${current}: the old name still works, for now.`);
    for (const note of before.notes) expect(note.split('\n')).toHaveLength(1);
  });

  it('takes a bare number of milliseconds on the flags that once took one, and says to give the unit', () => {
    const { args, notes } = parseNoting(['demo', '--pace', '100', '--jitter', '2000']);
    expect(args).toMatchObject({ paceMs: 100, jitterMs: 2_000 });
    expect(notes).toEqual([
      '[deprecated] --pace 100: a number without a unit is read as milliseconds (100ms); give the unit, e.g. --pace 100ms.',
      '[deprecated] --jitter 2000: a number without a unit is read as milliseconds (2s); give the unit, e.g. --jitter 2000ms.',
    ]);
    expect(parseNoting(['demo', '--pace', '100ms']).notes).toEqual([]);
  });

  it('takes the old command name resume for unpause', () => {
    const before = parseNoting(['resume', '--run', 'run-1']);
    expect(before.args).toEqual(parseNoting(['unpause', '--run', 'run-1']).args);
    expect(before.args).toEqual({ command: 'unpause', fleetRun: 'run-1', databaseUrl: null });
    expect(before.notes).toEqual(['[deprecated] the command resume is now unpause: the old name still works, for now.']);
    expect(parseArgs(['help', 'resume'], CWD)).toEqual({ command: 'help', topic: 'unpause' });
  });

  it('refuses an old flag given beside its new one, as any repeated option', () => {
    expect(() => parseArgs(['demo', '--otel-content', '--trace-content'], CWD)).toThrow('--trace-content is given twice: give it once.');
    expect(() => parseArgs(['demo', '--trace-content', '--otel-content'], CWD)).toThrow('--otel-content (now --trace-content) is given twice');
  });
});

describe('a command reads only the options it declares', () => {
  const declared = option({ key: 'declared', type: 'boolean', help: 'declared' });

  it('fails a parse that reads an undeclared option at run time, naming it', () => {
    const sloppy = command({
      name: 'sloppy',
      words: [],
      summary: '',
      description: '',
      options: [declared],
      examples: [],
      // The types refuse this too (see below); a cast is the only way to get it past them.
      parse: (values) => ({ declared: values.declared, misspelt: (values as unknown as Record<string, unknown>).declard }),
    });
    const { values } = readOptions(sloppy as never, ['--declared'], () => {});
    expect(values.declared).toBe(true);
    expect(() => sloppy.parse(values as never, { positionals: [], cwd: CWD, words: [] })).toThrow('sloppy reads the option "declard", which its declarations do not have');
  });

  it('fails to compile a parse that reads an undeclared option (tsc runs over this file with the tests)', () => {
    const typed = command({
      name: 'typed',
      words: [],
      summary: '',
      description: '',
      options: [declared],
      examples: [],
      parse: (values) => {
        const read: boolean = values.declared;
        // @ts-expect-error: "declard" is not a declared option of this command.
        const misspelt: unknown = values.declard;
        return { read, misspelt };
      },
    });
    expect(typed.options.map(flagOf)).toEqual(['declared']);
  });

  it.each(COMMANDS.map((spec) => [spec.name, spec] as const))('%s: its parse reads nothing undeclared, with every option given', (name, spec) => {
    // Every option at once may be refused as a combination; each alone must parse without reading past the declarations.
    for (const o of spec.options) {
      try {
        parseArgs([name, ...(REQUIRED[name] ?? []), `--${flagOf(o)}`, ...sample(o)], CWD);
      } catch (error) {
        expect((error as Error).name, `${name} --${flagOf(o)}: ${(error as Error).message}`).toBe('UsageError');
      }
    }
  });
});

describe('the options table of docs/command-line.md', () => {
  it('is the table the declarations print (npm run options-table writes it)', () => {
    const readme = fs.readFileSync(path.join(REPO, 'docs', 'command-line.md'), 'utf8');
    const start = readme.indexOf(OPTIONS_TABLE_START);
    const end = readme.indexOf(OPTIONS_TABLE_END);
    expect(start, 'docs/command-line.md has no options table').toBeGreaterThan(-1);
    expect(readme.slice(start, end + OPTIONS_TABLE_END.length)).toBe(optionsTable());
  });

  it('has a row for every flag of every command, with its API option and its old names', () => {
    const table = optionsTable();
    for (const [, flag, o] of everyOption) {
      const row = table.split('\n').find((line) => line.startsWith(`| \`--${flag}`));
      expect(row, flag).toBeDefined();
      if (o.api) expect(row).toContain(`\`${o.api}\``);
      for (const alias of o.aliases ?? []) expect(row).toContain(`\`--${alias.flag}\``);
    }
  });
});
