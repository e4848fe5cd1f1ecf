/** The command line: parse, run the command, turn its outcome or error into an exit code. */
import {
  McpConfigFieldError,
  McpConfigSyntaxError,
  McpConfigUnreadableError,
  McpSdkMissingError,
  McpServerStartError,
  McpVerifyToolError,
} from '../mcp/errors.ts';
import { BadCallIdError, DecisionRefusedError, InboxFileError, PolicyLoosenedError } from '../approval/decision-errors.ts';
import { UnknownApprovalToolError } from '../approval/needs-decision.ts';
import { questionsAdvice } from '../approval/origin-advice.ts';
import { MissingApiKeyError, ModelCallError } from '../model/model.ts';
import { ContinueRefusedError } from '../runtime/continue-run.ts';
import { CrashSpecError } from '../runtime/crash-points.ts';
import { RunOriginMismatchError } from '../runtime/run-origin.ts';
import {
  RunExistsError,
  RunLockedError,
  RunLockLostError,
  StoreAccessError,
  StoreCorruptError,
  StoreMissingError,
  StoreVersionError,
  StoreWriteError,
} from '../store/errors.ts';
import { environmentProblem } from '../store/fs-problems.ts';
import { DatabaseUrlMissingError } from '../store/pg/database-url.ts';
import { PgMissingError } from '../store/pg/pg-missing.ts';
import { SchemaVersionError } from '../store/pg/schema.ts';
import { OtelSdkMissingError } from '../telemetry/otel-missing.ts';
import { OtlpProtocolError } from '../telemetry/otlp-env.ts';
import { redactSecrets } from '../util/redact.ts';
import { PruneOptionError, PruneRuleMissingError } from '../prune/prune-plan.ts';
import { WriteFaultSpecError } from '../store/write-faults.ts';
import { parseArgs, type StatusArgs, UsageError } from './args.ts';
import { commandSpec } from './command-table.ts';
import { NoSuchDirectoryError } from './errors.ts';
import { EXIT } from './exit-codes.ts';
import { commandHelp, mainHelp } from './help.ts';
import type { Writers } from './plain-reporter.ts';
import { packageVersion } from './version.ts';

/** Every line a command prints goes through here: no secret leaves in it (see redactSecrets). */
export const stdWriters: Writers = {
  out: (line) => process.stdout.write(`${redactSecrets(line)}\n`),
  err: (line) => process.stderr.write(`${redactSecrets(line)}\n`),
  terminal: process.stdout,
};

export async function runCli(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, writers: Writers = stdWriters): Promise<number> {
  const verbose = argv.includes('--verbose');
  try {
    const args = parseArgs(argv, process.cwd());
    switch (args.command) {
      case 'help': {
        const command = args.topic === null ? undefined : commandSpec(args.topic);
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
      case 'pending':
        return args.fleetRun !== null
          ? await (await import('./commands/fleet-decide.ts')).fleetPendingCommand(args, env, writers)
          : await (await decisions()).pendingCommand(args, env, writers);
      case 'approve':
      case 'deny':
      case 'answer':
        return args.fleetRun !== null
          ? await (await import('./commands/fleet-decide.ts')).fleetDecideCommand(args, env, writers)
          : await (await decisions()).decideCommand(args, env, writers);
      case 'history':
        return await (await import('./commands/status.ts')).historyCommand(args, writers);
      case 'viz':
        return await (await import('./commands/viz.ts')).vizCommand(args, writers, env);
      case 'prune':
        return await (await import('./commands/prune.ts')).pruneCommand(args, env, writers);
    }
  } catch (error) {
    return reportError(error, redactingWriters(writers, env), verbose);
  }
}

/**
 * Each command's module is loaded only when that command runs: `--help` and `status` do not
 * pay for the runtime, the TUI, the visualizer or pg.
 */
const fleet = () => import('./commands/fleet.ts');
const decisions = () => import('./commands/decide.ts');

/**
 * `status` lists a fleet when given --database-url, or when DURABLE_AGENT_DATABASE_URL is set
 * and no --dir was given; an explicit --dir always means the run in that directory.
 */
export function readsFleet(args: Pick<StatusArgs, 'databaseUrl' | 'dirGiven'>, env: NodeJS.ProcessEnv): boolean {
  return args.databaseUrl !== null || (!args.dirGiven && Boolean(env.DURABLE_AGENT_DATABASE_URL));
}

function isDatabaseUnreachable(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ETIMEDOUT' || code === '3D000' || code === '28P01' || code === '28000';
}

const REFUSALS = [
  UsageError,
  DatabaseUrlMissingError,
  PgMissingError,
  SchemaVersionError,
  CrashSpecError,
  WriteFaultSpecError,
  NoSuchDirectoryError,
  MissingApiKeyError,
  RunExistsError,
  RunLockedError,
  RunLockLostError,
  StoreMissingError,
  StoreVersionError,
  StoreCorruptError,
  RunOriginMismatchError,
  PolicyLoosenedError,
  OtelSdkMissingError,
  OtlpProtocolError,
  McpConfigUnreadableError,
  McpConfigSyntaxError,
  McpConfigFieldError,
  McpSdkMissingError,
  McpServerStartError,
  McpVerifyToolError,
  DecisionRefusedError,
  BadCallIdError,
  InboxFileError,
  UnknownApprovalToolError,
  PruneRuleMissingError,
  PruneOptionError,
  ContinueRefusedError,
];

/** The error's words may come from anywhere (an endpoint, a URL): the key of `env` is taken out too. */
function redactingWriters(writers: Writers, env: NodeJS.ProcessEnv): Writers {
  const keys = [env.ANTHROPIC_API_KEY, env.ANTHROPIC_AUTH_TOKEN];
  return { ...writers, out: (line) => writers.out(redactSecrets(line, keys)), err: (line) => writers.err(redactSecrets(line, keys)) };
}

function reportError(error: unknown, writers: Writers, verbose: boolean): number {
  const message = error instanceof Error ? error.message : String(error);
  if (REFUSALS.some((kind) => error instanceof kind)) {
    writers.err(`durable-agent: ${message}`);
    const advice = error instanceof RunOriginMismatchError ? questionsAdvice(error.startedBy, error.offered) : null;
    if (advice) writers.err(`durable-agent: ${advice}`);
    return EXIT.refused;
  }
  if (error instanceof ModelCallError) {
    writers.err(`durable-agent: ${message}`);
    return EXIT.modelFailed;
  }
  if (error instanceof StoreWriteError || error instanceof StoreAccessError) {
    writers.err(`durable-agent: ${message}`);
    return EXIT.storeWriteFailed;
  }
  // A file-system error the environment must fix, raised where no store code classified it.
  const failedPath = (error as NodeJS.ErrnoException | undefined)?.path;
  const environment = environmentProblem(error, failedPath ? `use ${failedPath}` : 'use a file', failedPath ?? 'a file');
  if (environment) {
    writers.err(`durable-agent: ${environment.message}`);
    return EXIT.storeWriteFailed;
  }
  if (isDatabaseUnreachable(error)) {
    writers.err(`durable-agent: cannot reach the database (${message}). Nothing was changed; check the URL and that PostgreSQL is running.`);
    return EXIT.storeWriteFailed;
  }
  writers.err(`durable-agent: unexpected error: ${message}`);
  if (verbose && error instanceof Error && error.stack) writers.err(error.stack);
  else writers.err('durable-agent: run again with --verbose for the stack trace; the run is saved up to its last checkpoint.');
  return EXIT.internal;
}
