/**
 * The words after a command into its values: node:util's parseArgs splits them (`--a=b`, `--`),
 * and every rule about what a word may be comes from the command's declarations. Pure: returns
 * data or throws UsageError (SecretOnCommandLineError for a secret given as a word); a deprecated
 * flag is reported through `onNote`, never printed here.
 */
import { parseArgs as splitArgs } from 'node:util';
import { SecretOnCommandLineError } from '../errors.ts';
import { UsageError } from '../usage-error.ts';
import { formatDuration, parseDuration } from '../duration.ts';
import type { CommandSpec } from './command.ts';
import { flagOf, type OptionAlias, type OptionSpec } from './option.ts';

type Value = string | number | boolean | undefined;

export interface ReadOptions {
  /** By key, every declared option present (undefined when absent, defaults filled in). */
  values: Record<string, Value>;
  positionals: string[];
  words: string[];
}

interface Accepted {
  option: OptionSpec;
  /** Set when the word was an old flag. */
  alias: OptionAlias | null;
}

export function readOptions(command: CommandSpec, args: readonly string[], onNote: (line: string) => void): ReadOptions {
  const byFlag = flagTable(command);
  const { tokens } = splitArgs({
    args: [...args],
    options: Object.fromEntries([...byFlag].map(([flag, { option }]) => [flag, { type: option.type === 'boolean' ? 'boolean' : 'string' }])),
    // Not strict: every refusal below is worded here, with what to do instead.
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values: Record<string, Value> = Object.fromEntries(command.options.map((option) => [option.key, option.type === 'boolean' ? false : undefined]));
  const given = new Set<string>();
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
      if ((words.length === command.words.length || command.wordsOptional) && positionals.length < wanted.length) {
        positionals.push(token.value);
        continue;
      }
      const expected = command.words.length > 0 || wanted.length > 0 ? ` (expected: ${usageOf(command)})` : '';
      throw new UsageError(`Unexpected argument "${token.value}" for ${command.name}${expected}. Run ${helpHint(command)} for its options.`);
    }
    const accepted = byFlag.get(token.name);
    const secretAdvice = accepted ? undefined : command.secretFlags?.[token.name];
    if (secretAdvice !== undefined) throw new SecretOnCommandLineError(`--${token.name}`, secretAdvice);
    if (!accepted || token.rawName !== `--${token.name}`) {
      throw new UsageError(`Unknown option ${token.rawName} for ${command.name}. Its options: ${command.options.map((o) => `--${flagOf(o)}`).join(' ')} (${helpHint(command)}).`);
    }
    const { option, alias } = accepted;
    const flag = `--${flagOf(option)}`;
    if (given.has(option.key)) throw new UsageError(`${alias ? `--${alias.flag} (now ${flag})` : flag} is given twice: give it once.`);
    given.add(option.key);
    if (alias) onNote(`[deprecated] --${alias.flag} is now ${flag}: the old name still works, for now.`);
    values[option.key] = valueOf(option, `--${token.name}`, token.value, token.inlineValue, alias, onNote);
  }
  if (words.length < command.words.length && !command.wordsOptional) throw new UsageError(`${command.name} needs: ${usageOf(command)}. Run ${helpHint(command)} for usage.`);
  const missing = wanted.slice(positionals.length).filter((arg) => !arg.optional);
  if (missing.length > 0) {
    throw new UsageError(`${command.name} needs ${missing.map((arg) => `${arg.name} (${arg.help})`).join(' and ')}: ${usageOf(command)}. Run ${helpHint(command)} for usage.`);
  }
  for (const option of command.options) {
    if (option.default !== undefined && values[option.key] === undefined) values[option.key] = option.default;
  }
  return { values: strictValues(command, values), positionals, words };
}

/** Every flag the command accepts, its own and its old ones, with the option each sets. */
function flagTable(command: CommandSpec): Map<string, Accepted> {
  const table = new Map<string, Accepted>();
  const add = (flag: string, accepted: Accepted) => {
    if (table.has(flag)) throw new Error(`${command.name} declares the flag --${flag} twice`);
    table.set(flag, accepted);
  };
  for (const option of command.options) {
    add(flagOf(option), { option, alias: null });
    for (const alias of option.aliases ?? []) add(alias.flag, { option, alias });
  }
  return table;
}

/**
 * The values a command's parse reads: reading a key its options do not declare throws, so that a
 * parse cannot depend on an option the help and the parser know nothing of (the types say so too).
 */
function strictValues(command: CommandSpec, values: Record<string, Value>): Record<string, Value> {
  return new Proxy(values, {
    get(target, key, receiver) {
      if (typeof key === 'string' && !Object.hasOwn(target, key)) {
        throw new Error(`${command.name} reads the option "${key}", which its declarations do not have: declare it, or read a declared one`);
      }
      return Reflect.get(target, key, receiver);
    },
  });
}

// biome-ignore lint/suspicious/noShadowRestrictedNames: a module's own helper; the global valueOf is never meant here
function valueOf(option: OptionSpec, flag: string, value: string | undefined, inline: boolean | undefined, alias: OptionAlias | null, onNote: (line: string) => void): Value {
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
  if (option.type === 'duration') return durationOf(option, flag, value, alias, onNote);
  if (option.type === 'decimal') return decimalOf(option, flag, value);
  if (option.type === 'ratio') return ratioOf(option, flag, value);
  return integerOf(option, flag, value);
}

function durationOf(option: OptionSpec, flag: string, text: string, alias: OptionAlias | null, onNote: (line: string) => void): number {
  const min = option.min ?? 1_000;
  const max = option.max ?? Number.MAX_SAFE_INTEGER;
  // An old flag took whole milliseconds: a bare number still means that, said once.
  const bare = /^\d{1,15}$/.test(text) && (alias ? alias.bareMilliseconds === true : option.bareMilliseconds === true);
  const ms = bare ? Number(text) : parseDuration(text);
  if (ms === null || ms < min || ms > max) {
    throw new UsageError(
      `${flag} takes a duration from ${formatDuration(min)} to ${formatDuration(max)}: a whole number and ms, s, m, h or d (500ms, 90s, 15m, 2h, 3d), not "${shorten(text)}".`,
    );
  }
  if (bare) onNote(`[deprecated] ${flag} ${text}: a number without a unit is read as milliseconds (${formatDuration(ms)}); give the unit, e.g. --${flagOf(option)} ${text}ms.`);
  return ms;
}

/** A value as a refusal quotes it: long ones shortened, with their length. */
export function shorten(text: string): string {
  return text.length > 40 ? `${text.slice(0, 20)}…${text.slice(-10)} (${text.length} characters)` : text;
}

function ratioOf(option: OptionSpec, flag: string, text: string): number {
  const number = /^(\d+\.?\d*|\.\d+)$/.test(text) ? Number(text) : Number.NaN;
  if (!(number >= option.min! && number <= option.max!)) {
    throw new UsageError(`${flag} takes a ratio from ${option.min} to ${option.max} (0.8 is 80%), not "${shorten(text)}".`);
  }
  return number;
}

function integerOf(option: OptionSpec, flag: string, text: string): number {
  const min = option.min ?? 0;
  const max = option.max ?? Number.MAX_SAFE_INTEGER;
  const number = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(number >= min && number <= max)) {
    throw new UsageError(`${flag} takes a whole number from ${min} to ${max}, not "${shorten(text)}".`);
  }
  return number;
}

function decimalOf(option: OptionSpec, flag: string, text: string): number {
  const min = option.min ?? 0;
  const max = option.max ?? Number.MAX_SAFE_INTEGER;
  const number = /^\d+(\.\d+)?$/.test(text) ? Number(text) : Number.NaN;
  if (!(number >= min && number <= max)) {
    throw new UsageError(`${flag} takes a number from ${min} to ${max} (digits and at most one ".", e.g. 2.50), not "${shorten(text)}".`);
  }
  return number;
}

export function usageOf(command: CommandSpec): string {
  return ['durable-agent', command.name, ...command.words, ...(command.arguments ?? []).map((arg) => (arg.optional ? `[${arg.name}]` : arg.name))].join(' ');
}

export function helpHint(command: CommandSpec): string {
  return `durable-agent ${command.name} --help`;
}
