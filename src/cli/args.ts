/**
 * Command-line parsing against every command (parse-command-line.ts): pure, returns data or
 * throws UsageError; never prints or exits. Each command's options and parse are declared in specs/.
 */
import { COMMANDS, commandSpec } from './command-table.ts';
import { type CliArgs, type CommandLookup, parseCommandLine } from './parse-command-line.ts';

export { UsageError } from './usage-error.ts';
export type { CliArgs, HelpArgs } from './parse-command-line.ts';

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
export type { KeysArgs } from './specs/keys.ts';
export type { ListArgs } from './specs/list.ts';
export type { PruneArgs } from './specs/prune.ts';
export type { RaiseArgs } from './specs/raise.ts';
export type { RunArgs } from './specs/run.ts';
export type { ScheduleArgs } from './specs/schedule.ts';
export type { ServeArgs } from './specs/serve.ts';
export type { TenantArgs } from './specs/tenant.ts';
export type { TokenArgs } from './specs/token.ts';
export type { HistoryArgs, StatusArgs } from './specs/status.ts';
export type { VizArgs } from './specs/viz.ts';

/** `onNote` hears of each old name used (a flag or a command), to say its new one once. */
export function parseArgs(argv: readonly string[], cwd: string, onNote: (line: string) => void = () => {}): CliArgs {
  return parseCommandLine(argv, EVERY_COMMAND, cwd, onNote);
}

const EVERY_COMMAND: CommandLookup = { names: COMMANDS.map((command) => command.name), find: commandSpec };
