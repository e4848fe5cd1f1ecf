/**
 * Turns an error that ended a command into its message and exit code: the package's own errors by
 * their kind, the others by what the system said. A module of its own, loaded only when a command fails.
 */
import { questionsAdvice } from '../awaits/origin-advice.ts';
import { RunOriginMismatchError } from '../runtime/run-origin.ts';
import { environmentProblem } from '../store/fs-problems.ts';
import { DurableAgentError } from '../util/durable-agent-error.ts';
import { EXIT } from './exit-codes.ts';
import { runsByIdAdvice } from './runs-by-id-advice.ts';
import type { Writers } from './plain-reporter.ts';

function isDatabaseUnreachable(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ETIMEDOUT' || code === '3D000' || code === '28P01' || code === '28000';
}

export function reportError(error: unknown, writers: Writers, verbose: boolean): number {
  const message = error instanceof Error ? error.message : String(error);
  // The package's own errors say what they are: the exit code follows from their kind.
  if (error instanceof DurableAgentError && error.kind !== 'internal' && error.kind !== 'tool') {
    writers.err(`durable-agent: ${message}`);
    const advice = error instanceof RunOriginMismatchError ? questionsAdvice(error.startedBy, error.offered) : runsByIdAdvice(error);
    if (advice) writers.err(`durable-agent: ${advice}`);
    return error.exitCode;
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
