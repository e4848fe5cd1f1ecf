/**
 * Command-line parsing: pure, returns data or throws UsageError; never prints or exits. It finds
 * the command among the commands it is given and hands it its words: args.ts gives it every
 * command, the CLI (command-index.ts) only the one the line names, so that a command starts
 * without loading the declarations of all the others.
 */
import type { AnyCommandSpec, CommandArgs } from './command-table.ts';
import { readOptions } from './options/read-options.ts';
import { UsageError } from './usage-error.ts';

/** `topic`: the command whose help was asked for, or null for the list of commands. */
export interface HelpArgs {
  command: 'help';
  topic: string | null;
}

export type CliArgs = CommandArgs | HelpArgs | { command: 'version' };

/** The commands a parse can find: every command's name (for the messages), and their declarations. */
export interface CommandLookup {
  readonly names: readonly string[];
  /** The command of this name or old name; undefined if there is none (or its declaration was not loaded). */
  find(name: string): AnyCommandSpec | undefined;
}

/** `onNote` hears of each old name used (a flag or a command), to say its new one once. */
export function parseCommandLine(argv: readonly string[], commands: CommandLookup, cwd: string, onNote: (line: string) => void = () => {}): CliArgs {
  const [first, ...rest] = argv;
  if (first === undefined || first === '--help' || first === '-h') return { command: 'help', topic: null };
  if (first === 'help') return helpAbout(rest, commands);
  if (first === '--version' || first === '-v' || first === 'version') {
    if (rest.length > 0) throw new UsageError(`${first} takes nothing after it.`);
    return { command: 'version' };
  }
  if (first.startsWith('-')) throw new UsageError(`${first} is not a command: the command comes first (durable-agent <command> [options]). Run durable-agent --help for the commands.`);
  const command = commands.find(first);
  if (!command) throw new UsageError(`Unknown command "${first}". Commands: ${commands.names.join(', ')}. Run durable-agent --help for usage.`);
  if (asksForHelp(rest)) return { command: 'help', topic: command.name };
  if (command.name !== first) onNote(`[deprecated] the command ${first} is now ${command.name}: the old name still works, for now.`);
  const { values, positionals, words } = readOptions(command, rest, onNote);
  return command.parse(values as never, { positionals, cwd, words });
}

function helpAbout(rest: readonly string[], commands: CommandLookup): HelpArgs {
  const [topic, ...more] = rest;
  if (topic === undefined) return { command: 'help', topic: null };
  const command = commands.find(topic);
  if (!command || more.length > 0) throw new UsageError(`help takes one command name (${commands.names.join(', ')}), not "${rest.join(' ')}".`);
  return { command: 'help', topic: command.name };
}

/** `-h` or `--help` anywhere before `--` shows the command's help, whatever else is on the line. */
function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}
