/**
 * One option of the command line, declared once: its flag, the type and range of its value, its
 * help, the API option it sets, and the old flags it still answers to. The parser, the help and
 * the README's options table are all read from these declarations.
 *
 * The naming rule, checked by a test over every command: the flag is the kebab case of the
 * option's key; the key is the API option's name, with the word of its group in front where the
 * name alone would not say what it is about (`clearTriggerTokens` for `clearToolUses.triggerTokens`);
 * a duration's key ends in `Ms` and its flag drops it (`decisionTimeoutMs` is `--decision-timeout
 * 15m`); an id's key ends in `Id` and its flag drops it, the value being the ID (`--run ID` for
 * `runId`); a flag that reads its value from a file ends in `-file`; a flag that turns an API
 * option off is `no-` and the option (`--no-stream` for `stream: false`).
 */

export type OptionType = 'boolean' | 'string' | 'integer' | 'duration' | 'decimal' | 'ratio';

/** A flag an earlier version had: still accepted, with a one-line note naming the new one. */
export interface OptionAlias {
  /** Without the dashes. */
  readonly flag: string;
  /** The old flag took whole milliseconds without a unit (`--timeout 1000`): a bare number is read so. */
  readonly bareMilliseconds?: boolean;
}

export interface OptionSpec {
  /** What a command's parse reads; its flag is derived from it (see the naming rule above). */
  readonly key: string;
  readonly type: OptionType;
  /** What the value is called in the help (DIR, N, DURATION); options with a value only. */
  readonly value?: string;
  readonly help: string;
  /** Integer, decimal and ratio options: the allowed range, inclusive (duration options: in milliseconds). */
  readonly min?: number;
  readonly max?: number;
  /** Integer and duration options: the value when the option is absent (the parser fills it in). */
  readonly default?: number;
  /** Shown as the default where the parser leaves the value unset and a later layer decides. */
  readonly defaultText?: string;
  /** The API option this sets (`StartOptions.maxTurns`, `budget.maxCostUsd`); absent: the command line's own. */
  readonly api?: string;
  /** The flag reads a file and the API takes its text (`--system-file` for `system`). */
  readonly readsFile?: boolean;
  /** A duration flag that once took bare milliseconds (`--pace 100`): a bare number is still read so, with a note. */
  readonly bareMilliseconds?: boolean;
  readonly aliases?: readonly OptionAlias[];
}

/** The flag of an option, without the dashes: the kebab case of its key, less a duration's `Ms`. */
export function flagOf(option: Pick<OptionSpec, 'key' | 'type'>): string {
  const key = option.type === 'duration' ? option.key.replace(/Ms$/, '') : option.key;
  return key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}

/**
 * The flags of the option keys a command line gave, as a refusal names them ("--agent, --catch-up").
 * Only a duration's key ends in `Ms`, so the key alone tells its flag.
 */
export function flagsNamed(keys: readonly string[]): string {
  return keys.map((key) => `--${flagOf({ key, type: key.endsWith('Ms') ? 'duration' : 'string' })}`).join(', ');
}

/** Declares an option, keeping its key and type literal so that a command's values are typed from it. */
export function option<const O extends OptionSpec>(spec: O): O {
  return spec;
}

type ValueOf<O extends OptionSpec> = O['type'] extends 'boolean'
  ? boolean
  : O['type'] extends 'string'
    ? string | undefined
    : O extends { readonly default: number }
      ? number
      : number | undefined;

/** The parsed values of a list of options, by key: reading a key the list does not declare is a type error. */
export type ValuesOf<Options extends readonly OptionSpec[]> = { readonly [O in Options[number] as O['key']]: ValueOf<O> };
