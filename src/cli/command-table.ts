/**
 * Every command of the command line, once: each is declared with its options and its parse in
 * specs/, and the parser (args.ts), the help (help.ts) and the README's options table
 * (options-table.ts) are all read from this list, so none of them can drift from the others.
 */
import type { CommandSpec } from './options/command.ts';
import type { OptionSpec } from './options/option.ts';
import { consoleSpec } from './specs/console.ts';
import { cancelSpec, pauseSpec, unpauseSpec } from './specs/control.ts';
import { answerSpec, approveSpec, denySpec, pendingSpec } from './specs/decide.ts';
import { demoSpec } from './specs/demo.ts';
import { drillSpec } from './specs/drill.ts';
import { replaySpec } from './specs/replay.ts';
import { dbSpec, submitSpec, workerSpec } from './specs/fleet.ts';
import { forkSpec } from './specs/fork.ts';
import { keysSpec } from './specs/keys.ts';
import { listSpec } from './specs/list.ts';
import { pruneSpec } from './specs/prune.ts';
import { raiseSpec } from './specs/raise.ts';
import { resultSpec } from './specs/result.ts';
import { runSpec } from './specs/run.ts';
import { scheduleSpec } from './specs/schedule.ts';
import { serveSpec } from './specs/serve.ts';
import { tenantSpec } from './specs/tenant.ts';
import { tokenSpec } from './specs/token.ts';
import { signalSpec } from './specs/signal.ts';
import { historySpec, statusSpec } from './specs/status.ts';
import { vizSpec } from './specs/viz.ts';

export type { ArgumentSpec, CommandSpec } from './options/command.ts';
export type { OptionSpec } from './options/option.ts';

/** A command as the parser and the help read it: any options, the args of one of the commands. */
export type AnyCommandSpec = CommandSpec<readonly OptionSpec[], CommandArgs>;

export const COMMAND_SPECS = [
  demoSpec,
  runSpec,
  statusSpec,
  historySpec,
  listSpec,
  pendingSpec,
  approveSpec,
  denySpec,
  answerSpec,
  signalSpec,
  pruneSpec,
  keysSpec,
  cancelSpec,
  pauseSpec,
  unpauseSpec,
  raiseSpec,
  forkSpec,
  vizSpec,
  consoleSpec,
  serveSpec,
  dbSpec,
  submitSpec,
  workerSpec,
  scheduleSpec,
  tenantSpec,
  tokenSpec,
  resultSpec,
  drillSpec,
  replaySpec,
] as const;

/** The arguments of each command, as its parse returns them. */
export type CommandArgs = ReturnType<(typeof COMMAND_SPECS)[number]['parse']>;

/** The list, for what reads every command alike (the parser, the help): each parse returns its own args. */
// The parse of each declaration takes the values of its own options only; read alike, it is given
// the values that readOptions made from those very options.
export const COMMANDS: readonly AnyCommandSpec[] = COMMAND_SPECS as unknown as readonly AnyCommandSpec[];

/** A command by its name, or by a name it had before. */
export function commandSpec(name: string): AnyCommandSpec | undefined {
  return COMMANDS.find((command) => command.name === name) ?? COMMANDS.find((command) => command.aliases?.includes(name));
}
