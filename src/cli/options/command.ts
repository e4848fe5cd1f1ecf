/** A command of the command line, declared once: its words, arguments, options, help and parse. */
import type { OptionSpec, ValuesOf } from './option.ts';

/** A value given by its place after the command's words: `approve CALL_ID`. */
export interface ArgumentSpec {
  /** As shown in the usage and help: CALL_ID, TEXT. */
  readonly name: string;
  readonly help: string;
  /** May be left out (the last ones only): `token list` has no NAME, `token add NAME` has. */
  readonly optional?: boolean;
}

export interface ParseContext {
  /** The command's arguments, in the order it declares them. */
  readonly positionals: readonly string[];
  /** Where a path option's default (the current directory) comes from. */
  readonly cwd: string;
  /** The command's words that were given (all of them, unless the command's words are optional). */
  readonly words: readonly string[];
}

export interface CommandSpec<Options extends readonly OptionSpec[] = readonly OptionSpec[], Args = unknown> {
  readonly name: string;
  /** Names an earlier version gave the command: still accepted, with a one-line note. */
  readonly aliases?: readonly string[];
  /** Words that must follow the command, in order: `db migrate`, `submit demo`. */
  readonly words: readonly string[];
  /** The words may be left out, where an option stands for them (`submit --agent NAME` for `submit demo`): parse decides. */
  readonly wordsOptional?: boolean;
  /** Values that must follow the words, in order (required, but for those marked optional at the end). */
  readonly arguments?: readonly ArgumentSpec[];
  /** The synopsis after `durable-agent`, where the options alone do not say what is required. */
  readonly synopsis?: string;
  /** One line for the list of commands. */
  readonly summary: string;
  readonly description: string;
  readonly options: Options;
  /**
   * Flags that once took a secret on the command line, where every user of the machine reads it:
   * refused by name (not as unknown), each with where to give the secret instead.
   */
  readonly secretFlags?: Readonly<Record<string, string>>;
  readonly examples: readonly string[];
  /** The parsed values into the command's arguments; throws UsageError for a combination it refuses. */
  readonly parse: (values: ValuesOf<Options>, context: ParseContext) => Args;
}

/** Declares a command, its parse typed from its options: a misspelt option key does not compile. */
export function command<const Options extends readonly OptionSpec[], Args>(spec: CommandSpec<Options, Args>): CommandSpec<Options, Args> {
  return spec;
}
