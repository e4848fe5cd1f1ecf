/** The command line: parse, run the command, turn its outcome or error into an exit code. */
import { MissingApiKeyError, ModelCallError } from '../model/model.ts';
import { CrashSpecError } from '../runtime/crash-points.ts';
import {
  RunExistsError,
  RunLockedError,
  StoreCorruptError,
  StoreMissingError,
  StoreVersionError,
  StoreWriteError,
} from '../store/errors.ts';
import { parseArgs, USAGE, UsageError } from './args.ts';
import { demoCommand } from './commands/demo.ts';
import { historyCommand, statusCommand } from './commands/status.ts';
import { vizCommand } from './commands/viz.ts';
import { EXIT } from './exit-codes.ts';
import type { Writers } from './plain-reporter.ts';

export const stdWriters: Writers = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

export async function runCli(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, writers: Writers = stdWriters): Promise<number> {
  const verbose = argv.includes('--verbose');
  try {
    const args = parseArgs(argv, process.cwd());
    switch (args.command) {
      case 'help':
        writers.out(USAGE);
        return EXIT.done;
      case 'version':
        writers.out('durable-agent 0.1.0');
        return EXIT.done;
      case 'demo':
        return await demoCommand(args, env, writers);
      case 'status':
        return await statusCommand(args, writers);
      case 'history':
        return await historyCommand(args, writers);
      case 'viz':
        return await vizCommand(args, writers, env);
    }
  } catch (error) {
    return reportError(error, writers, verbose);
  }
}

const REFUSALS = [
  UsageError,
  CrashSpecError,
  MissingApiKeyError,
  RunExistsError,
  RunLockedError,
  StoreMissingError,
  StoreVersionError,
  StoreCorruptError,
];

function reportError(error: unknown, writers: Writers, verbose: boolean): number {
  const message = error instanceof Error ? error.message : String(error);
  if (REFUSALS.some((kind) => error instanceof kind)) {
    writers.err(`durable-agent: ${message}`);
    return EXIT.refused;
  }
  if (error instanceof ModelCallError) {
    writers.err(`durable-agent: ${message}`);
    return EXIT.modelFailed;
  }
  if (error instanceof StoreWriteError) {
    writers.err(`durable-agent: ${message}`);
    return EXIT.storeWriteFailed;
  }
  writers.err(`durable-agent: unexpected error: ${message}`);
  if (verbose && error instanceof Error && error.stack) writers.err(error.stack);
  else writers.err('durable-agent: run again with --verbose for the stack trace; the run is saved up to its last checkpoint.');
  return EXIT.internal;
}
