/**
 * Every command by name, with the module that declares it: the command line loads the declaration
 * of the command it runs and of no other (each declaration brings its options, and some of those
 * bring tables of their own). The names and their order are those of command-table.ts, which
 * loads them all, for the help and the options table; a test holds the two lists together.
 */
import type { AnyCommandSpec } from './command-table.ts';
import type { CommandLookup } from './parse-command-line.ts';

interface IndexEntry {
  readonly name: string;
  readonly aliases?: readonly string[];
  readonly load: () => Promise<AnyCommandSpec>;
}

// Each parse takes its own command's values (see COMMANDS in command-table.ts).
const declared = (spec: unknown) => spec as AnyCommandSpec;

export const COMMAND_INDEX: readonly IndexEntry[] = [
  { name: 'demo', load: async () => declared((await import('./specs/demo.ts')).demoSpec) },
  { name: 'run', load: async () => declared((await import('./specs/run.ts')).runSpec) },
  { name: 'status', load: async () => declared((await import('./specs/status.ts')).statusSpec) },
  { name: 'history', load: async () => declared((await import('./specs/status.ts')).historySpec) },
  { name: 'list', load: async () => declared((await import('./specs/list.ts')).listSpec) },
  { name: 'pending', load: async () => declared((await import('./specs/decide.ts')).pendingSpec) },
  { name: 'approve', load: async () => declared((await import('./specs/decide.ts')).approveSpec) },
  { name: 'deny', load: async () => declared((await import('./specs/decide.ts')).denySpec) },
  { name: 'answer', load: async () => declared((await import('./specs/decide.ts')).answerSpec) },
  { name: 'signal', load: async () => declared((await import('./specs/signal.ts')).signalSpec) },
  { name: 'prune', load: async () => declared((await import('./specs/prune.ts')).pruneSpec) },
  { name: 'keys', load: async () => declared((await import('./specs/keys.ts')).keysSpec) },
  { name: 'cancel', load: async () => declared((await import('./specs/control.ts')).cancelSpec) },
  { name: 'pause', load: async () => declared((await import('./specs/control.ts')).pauseSpec) },
  { name: 'unpause', aliases: ['resume'], load: async () => declared((await import('./specs/control.ts')).unpauseSpec) },
  { name: 'raise', load: async () => declared((await import('./specs/raise.ts')).raiseSpec) },
  { name: 'fork', load: async () => declared((await import('./specs/fork.ts')).forkSpec) },
  { name: 'viz', load: async () => declared((await import('./specs/viz.ts')).vizSpec) },
  { name: 'console', load: async () => declared((await import('./specs/console.ts')).consoleSpec) },
  { name: 'serve', load: async () => declared((await import('./specs/serve.ts')).serveSpec) },
  { name: 'db', load: async () => declared((await import('./specs/fleet.ts')).dbSpec) },
  { name: 'submit', load: async () => declared((await import('./specs/fleet.ts')).submitSpec) },
  { name: 'worker', load: async () => declared((await import('./specs/fleet.ts')).workerSpec) },
  { name: 'schedule', load: async () => declared((await import('./specs/schedule.ts')).scheduleSpec) },
  { name: 'tenant', load: async () => declared((await import('./specs/tenant.ts')).tenantSpec) },
  { name: 'token', load: async () => declared((await import('./specs/token.ts')).tokenSpec) },
  { name: 'result', load: async () => declared((await import('./specs/result.ts')).resultSpec) },
  { name: 'drill', load: async () => declared((await import('./specs/drill.ts')).drillSpec) },
  { name: 'replay', load: async () => declared((await import('./specs/replay.ts')).replaySpec) },
];

/** The entry of a name or an old name, as commandSpec finds a command. */
function entryOf(name: string): IndexEntry | undefined {
  return COMMAND_INDEX.find((entry) => entry.name === name) ?? COMMAND_INDEX.find((entry) => entry.aliases?.includes(name));
}

/**
 * The commands a parse of `argv` needs: the one it names (the one it runs, or the one `help` is
 * asked about), loaded, and every name for the messages. A line that names no known command
 * needs no declaration: it is a main help, a version, or a usage error.
 */
export async function commandsFor(argv: readonly string[]): Promise<CommandLookup> {
  const word = argv[0] === 'help' ? argv[1] : argv[0];
  const entry = word === undefined ? undefined : entryOf(word);
  const spec = entry ? await entry.load() : undefined;
  return {
    names: COMMAND_INDEX.map((command) => command.name),
    find: (name) => (entry !== undefined && entryOf(name) === entry ? spec : undefined),
  };
}
