/**
 * Command-line parsing: pure, returns data or throws UsageError; never prints or exits. Each
 * command's options and parse are declared in specs/; this file finds the command and hands it
 * its words.
 */
import { COMMANDS, commandSpec, type CommandArgs } from './command-table.ts';
import { readOptions } from './options/read-options.ts';

export { UsageError } from './usage-error.ts';
import { UsageError } from './usage-error.ts';

export type { ApprovalArgs } from './options/approval.ts';
export type { CompactionArgs } from './options/compaction.ts';
export type { RequestArgs } from './options/model.ts';
export type { ConsoleArgs } from './specs/console.ts';
export type { ControlArgs, UnpauseArgs } from './specs/control.ts';
export type { DecideArgs, PendingArgs } from './specs/decide.ts';
export type { DemoArgs } from './specs/demo.ts';
export type { DrillArgs } from './specs/drill.ts';
export type { ReplayArgs } from './specs/replay.ts';
export type { DbArgs, SubmitAgentArgs, SubmitArgs, WorkerArgs } from './specs/fleet.ts';
export type { ForkArgs } from './specs/fork.ts';
export type { ListArgs } from './specs/list.ts';
export type { PruneArgs } from './specs/prune.ts';
export type { RaiseArgs } from './specs/raise.ts';
export type { RunArgs } from './specs/run.ts';
export type { HistoryArgs, StatusArgs } from './specs/status.ts';
export type { VizArgs } from './specs/viz.ts';

/** `topic`: the command whose help was asked for, or null for the list of commands. */
export interface HelpArgs {
  command: 'help';
  topic: string | null;
}

export type CliArgs = CommandArgs | HelpArgs | { command: 'version' };

/** `onNote` hears of each old name used (a flag or a command), to say its new one once. */
export function parseArgs(argv: readonly string[], cwd: string, onNote: (line: string) => void = () => {}): CliArgs {
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
  if (command.name !== first) onNote(`[deprecated] the command ${first} is now ${command.name}: the old name still works, for now.`);
  const { values, positionals, words } = readOptions(command, rest, onNote);
  return command.parse(values as never, { positionals, cwd, words });
}

function helpAbout(rest: readonly string[]): HelpArgs {
  const [topic, ...more] = rest;
  if (topic === undefined) return { command: 'help', topic: null };
  const command = commandSpec(topic);
  if (!command || more.length > 0) throw new UsageError(`help takes one command name (${COMMANDS.map((c) => c.name).join(', ')}), not "${rest.join(' ')}".`);
  return { command: 'help', topic: command.name };
}

/** `-h` or `--help` anywhere before `--` shows the command's help, whatever else is on the line. */
function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}
