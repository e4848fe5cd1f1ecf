/**
 * Turns an error that ended a command into its message and exit code. A module of its own,
 * loaded only when a command fails: the error classes of every part of the package would
 * otherwise load on every start.
 */
import {
  McpConfigFieldError,
  McpConfigSyntaxError,
  McpConfigUnreadableError,
  McpSdkMissingError,
  McpServerStartError,
  McpVerifyToolError,
} from '../mcp/errors.ts';
import { DecisionRefusedError, PolicyLoosenedError } from '../approval/decision-errors.ts';
import { BadCallIdError, InboxFileError } from '../store/inbox/inbox-errors.ts';
import { UnknownApprovalToolError } from '../approval/needs-decision.ts';
import { questionsAdvice } from '../approval/origin-advice.ts';
import { MissingApiKeyError, ModelCallError } from '../model/model.ts';
import { BudgetPriceError } from '../budget/budget.ts';
import { ContinueRefusedError } from '../core/continue-run.ts';
import { ControlRefusedError, RunCancelledError } from '../control/control-request.ts';
import { ForkRefusedError } from '../fork/fork-errors.ts';
import { CrashSpecError } from '../runtime/crash-points.ts';
import { RunOriginMismatchError } from '../runtime/run-origin.ts';
import { SnapshotEveryError } from '../runtime/snapshot-policy.ts';
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
import { PruneOptionError, PruneRuleMissingError } from '../prune/prune-plan.ts';
import { WriteFaultSpecError } from '../store/write-faults.ts';
import { CompactionSettingsError } from '../compaction/compaction-settings.ts';
import { UsageError } from './args.ts';
import { NoSuchDirectoryError } from './errors.ts';
import { EXIT } from './exit-codes.ts';
import type { Writers } from './plain-reporter.ts';

function isDatabaseUnreachable(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ETIMEDOUT' || code === '3D000' || code === '28P01' || code === '28000';
}

const REFUSALS = [
  UsageError,
  BudgetPriceError,
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
  CompactionSettingsError,
  ContinueRefusedError,
  SnapshotEveryError,
  ControlRefusedError,
  RunCancelledError,
  ForkRefusedError,
];

export function reportError(error: unknown, writers: Writers, verbose: boolean): number {
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
