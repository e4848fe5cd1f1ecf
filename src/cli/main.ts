/** The command line: parse, run the command, turn its outcome or error into an exit code. */
import { redactSecrets } from '../util/redact.ts';
import { commandsFor } from './command-index.ts';
import { EXIT } from './exit-codes.ts';
import { type CliArgs, parseCommandLine } from './parse-command-line.ts';
import { placeRun, readsFleet } from './reads-fleet.ts';
import type { Writers } from './plain-reporter.ts';
import { packageVersion } from '../util/package-version.ts';

export { exitWhenWritten, watchOutput } from './process-end.ts';

/** Every line a command prints goes through here: no secret leaves in it (see redactSecrets). */
export const stdWriters: Writers = {
  out: (line) => process.stdout.write(`${redactSecrets(line)}\n`),
  err: (line) => process.stderr.write(`${redactSecrets(line)}\n`),
  terminal: process.stdout,
};

export async function runCli(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, writers: Writers = stdWriters): Promise<number> {
  const verbose = argv.includes('--verbose');
  try {
    const commands = await commandsFor(argv);
    const args = placed(parseCommandLine(argv, commands, process.cwd(), (note) => writers.err(note)), env);
    switch (args.command) {
      case 'help': {
        const command = args.topic === null ? undefined : commands.find(args.topic);
        // The list of commands loads every command's declaration: only the help needs them all.
        const { commandHelp, mainHelp } = await import('./help.ts');
        writers.out(command ? commandHelp(command) : mainHelp(packageVersion()));
        return EXIT.done;
      }
      case 'version':
        writers.out(`durable-agent ${packageVersion()}`);
        return EXIT.done;
      case 'demo':
        return await (await import('./commands/demo.ts')).demoCommand(args, env, writers);
      case 'run':
        return await (await import('./commands/run.ts')).runCommand(args, env, writers);
      case 'status':
        return readsFleet(args, env)
          ? await (await fleet()).fleetStatusCommand(args, env, writers)
          : await (await import('./commands/status.ts')).statusCommand(args, writers);
      case 'db':
        return await (await fleet()).dbCommand(args, env, writers);
      case 'submit':
        return await (await fleet()).submitCommand(args, env, writers);
      case 'worker':
        return await (await fleet()).workerCommand(args, env, writers);
      case 'schedule':
        return await (await import('./commands/schedule.ts')).scheduleCommand(args, env, writers);
      case 'tenant':
        return await (await import('./commands/tenant.ts')).tenantCommand(args, env, writers);
      case 'token':
        return (await import('./commands/token.ts')).tokenCommand(args, writers);
      case 'pending':
        // Without --run: every run of the fleet with --database-url (or its variable and no --dir), else of DIR.
        return args.fleetRun !== null || (args.fileRun === null && readsFleet(args, env))
          ? await (await import('./commands/fleet-decide.ts')).fleetPendingCommand(args, env, writers)
          : await (await import('./commands/pending.ts')).pendingCommand(args, env, writers);
      case 'approve':
      case 'deny':
      case 'answer':
        return args.fleetRun !== null
          ? await (await import('./commands/fleet-decide.ts')).fleetDecideCommand(args, env, writers)
          : await (await decisions()).decideCommand(args, env, writers);
      case 'signal':
        return await (await import('./commands/signal.ts')).signalCommand(args, env, writers);
      case 'list':
        return readsFleet(args, env)
          ? await (await fleet()).fleetStatusCommand({ ...args, command: 'status', runId: null }, env, writers, args)
          : await (await import('./commands/list.ts')).listCommand(args, writers);
      case 'history':
        return await (await import('./commands/status.ts')).historyCommand(args, writers);
      case 'viz':
        return await (await import('./commands/viz.ts')).vizCommand(args, writers, env);
      case 'console':
        return await (await import('./commands/console.ts')).consoleCommand(args, env, writers);
      case 'serve':
        return await (await import('./commands/serve.ts')).serveCommand(args, env, writers);
      case 'prune':
        return await (await import('./commands/prune.ts')).pruneCommand(args, env, writers);
      case 'keys':
        return await (await import('./commands/keys.ts')).keysCommand(args, env, writers);
      case 'cancel':
      case 'pause':
        return await (await import('./commands/control.ts')).controlCommand(args, env, writers);
      case 'unpause':
        return await (await import('./commands/control.ts')).unpauseCommand(args, env, writers);
      case 'raise':
        return await (await import('./commands/raise.ts')).raiseCommand(args, env, writers);
      case 'replay':
        return await (await import('./commands/replay.ts')).replayCommand(args, writers);
      case 'drill':
        return await (await import('./commands/drill.ts')).drillCommand(args, writers);
      case 'result':
        return await (await import('./commands/result.ts')).resultCommand(args, env, writers);
      case 'fork':
        return await (await import('./commands/fork.ts')).forkCommand(args, env, writers);
    }
  } catch (error) {
    return (await import('./report-error.ts')).reportError(error, redactingWriters(writers, env), verbose);
  }
}

/**
 * Each command's module is loaded only when that command runs, as is its declaration
 * (command-index.ts): `--help` and `status` do not pay for the runtime, the TUI, the visualizer
 * or pg, and `status` not for the options of `run`.
 */
const fleet = () => import('./commands/fleet.ts');
const decisions = () => import('./commands/decide.ts');

/** --run ID of a command that acts on a fleet run or a file run: which one, knowing the environment. */
function placed<T extends CliArgs>(args: T, env: NodeJS.ProcessEnv): T {
  return 'dirGiven' in args && 'fleetRun' in args && 'fileRun' in args ? (placeRun(args, env) as T) : args;
}

/** The error's words may come from anywhere (an endpoint, a URL): the key of `env` is taken out too. */
function redactingWriters(writers: Writers, env: NodeJS.ProcessEnv): Writers {
  const keys = [env.ANTHROPIC_API_KEY, env.ANTHROPIC_AUTH_TOKEN];
  return { ...writers, out: (line) => writers.out(redactSecrets(line, keys)), err: (line) => writers.err(redactSecrets(line, keys)) };
}
