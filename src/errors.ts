/**
 * durable-agent/errors: every error class the package throws to a program, to catch by class
 * or to read the fields of. Each extends DurableAgentError, whose `kind` says what to do about it,
 * so most programs need only that base (in the main entry too). Loading this entry starts
 * nothing and needs no optional package: pg, the MCP SDK and OpenTelemetry stay unloaded.
 *
 * @module durable-agent/errors
 */

// The base, and what each kind means.
export { DurableAgentError, ERROR_KINDS, OptionalDependencyMissingError } from './util/durable-agent-error.ts';
export type { ErrorKind } from './util/durable-agent-error.ts';

// The HTTP API's client (durable-agent/client): an error answer, a server out of reach.
export { ApiError, ApiUnreachableError } from './client/client-errors.ts';

// Options refused before a run starts or goes on: nothing was written.
export { CompactionSettingsError } from './compaction/compaction-settings.ts';
export { SnapshotEveryError } from './runtime/snapshot-policy.ts';
export { ToolConcurrencyError } from './runtime/tool-scheduler.ts';
export { RunOriginMismatchError } from './runtime/run-origin.ts';
export { ContinueRefusedError, type ContinueProblem } from './core/continue-run.ts';
export { InspectedRunSendError } from './runtime/run-inspection.ts';
export { UnknownLangError } from './lang/lang.ts';

// Agents: a definition that cannot be one, a run pinned to another version of its agent.
export { AgentDefinitionError } from './agent/agent-definition.ts';
export { AgentVersionMismatchError } from './runtime/agent-run.ts';
export { SubmitRefusedError, UnknownAgentError } from './fleet/submit-run.ts';
export { TenantError } from './core/tenant.ts';
export { TenantSettingsError } from './fleet/tenants.ts';
export { TokenNameError, TokenNameTakenError, TokenNotFoundError, TokensFileError, type TokensFileProblem } from './access/access-errors.ts';
export { ScheduleCronError, ScheduleNameTakenError, ScheduleNotFoundError, ScheduleRefusedError } from './fleet/schedule-errors.ts';
export { DrillPathError, SideEffectTwiceError } from './drill/drill-errors.ts';
export { DrillScriptError } from './drill/drill-script.ts';
export { AwaitRunTimeoutError, FleetRunMissingError } from './fleet/await-run-errors.ts';
export { WebhookSettingsError } from './fleet/webhook-errors.ts';

// Sub-agents: a child run with no folder to be kept in, or no budget left; a decision for a call two runs of a tree wait on.
export { SubagentBudgetSpentError, SubagentInputError, SubagentRunsUnknownError } from './subagent/subagent-errors.ts';
export { TreeCallAmbiguousError } from './runtime/tree-decisions.ts';

// Tools: a definition whose input schema cannot be one.
export { ToolInputSchemaError, type ToolInputSchemaProblem } from './tools/standard-input.ts';
// The Anthropic-defined tools (text editor, memory, bash): what a command could not do, as the model reads it.
export {
  DestinationExistsError,
  EmptyOldTextError,
  FileExistsError,
  FileTooLargeError,
  InsertLineError,
  MemoryPathError,
  MemoryRootError,
  OldTextNotFoundError,
  OldTextNotUniqueError,
  ViewRangeError,
} from './tools/anthropic/edit-errors.ts';
export { BashTimeoutError } from './tools/anthropic/bash-errors.ts';

// The store: a run in the way, a lock held or lost, a journal missing, damaged or unwritable.
export {
  RunExistsError,
  RunLockedError,
  RunKeyMissingError,
  RunLockLostError,
  RunNotSealedError,
  StoreAccessError,
  StoreCorruptError,
  StoreLostRecordError,
  StoreMissingError,
  StoreVersionError,
  StoreWriteError,
} from './store/errors.ts';
export type { JournalDamage, MissingRunAttempt } from './store/errors.ts';
export { StateFolderOpenError } from './store/state-folder.ts';

// A list's page asked for after a run the list does not hold.
export { ListCursorError } from './runtime/list-errors.ts';
// Sealed runs: a value that fails its check, a key not given, a list or file of keys refused, a keys hook that failed.
export { KeyFileTooOpenError, KeyFileUnreadableError, KeyHookError, KeyListError, KeyNotGivenError, SealedValueError, SealingUnsupportedError } from './seal/seal-errors.ts';

// Run ids: a name that cannot be one, an id taken by another task, an id the store was not opened for.
export { RunIdError, RunIdMismatchError, StoreHoldsOtherRunError } from './store/run-id.ts';
export { RunIdTakenError } from './runtime/attach-run.ts';

// The model: no key, what it supports could not be asked, or a call that failed (the scripted model's end of script is one).
export { MissingApiKeyError, ModelCallError, ModelLookupError } from './model/model.ts';
export { ScriptExhaustedError } from './model/scripted-model.ts';
// Claude's request options: one the API would refuse, a price that is not one, a resume that would ask otherwise than the run was started.
export { RequestOptionError, type RequestRule } from './model/request-options.ts';
export { ModelPriceError } from './model/prices.ts';
export { RequestOptionsChangedError } from './model/pinned-request.ts';

// Decisions: approvals and questions, asked for or given.
export { UnknownApprovalToolError } from './awaits/needs-decision.ts';
export { DecisionRefusedError, PolicyLoosenedError } from './awaits/decision-errors.ts';
export { SignalRefusedError, type SignalRefusal } from './awaits/signal-errors.ts';
export { WaitInputError } from './awaits/wait-tool.ts';
export type { DecisionRefusal } from './awaits/decision-errors.ts';
export { DecisionReplyError } from './awaits/decision-step.ts';

// Control: cancel and pause, and the stop between two steps that a pause or a signal makes.
export { ControlRefusedError, RunCancelledError } from './control/control-request.ts';
export { RunStoppedError } from './core/stop-errors.ts';
export { RunPausedError } from './control/run-control.ts';

// Fork.
export { ForkRefusedError, type ForkProblem } from './fork/fork-errors.ts';

// Prune.
export { PruneOptionError, PruneRuleMissingError } from './prune/prune-plan.ts';

// MCP tools: a config or a server refused (none of these needs the SDK loaded).
export {
  McpConfigFieldError,
  McpConfigSyntaxError,
  McpConfigUnreadableError,
  McpSdkMissingError,
  McpServerStartError,
  McpVerifyToolError,
} from './mcp/errors.ts';

// Budgets.
export { BudgetPriceError } from './budget/budget.ts';

// Drills: an armed crash point, and a crash point or write fault that names nothing.
export { CrashSpecError, SimulatedCrash } from './runtime/crash-points.ts';
export { WriteFaultSpecError } from './store/write-faults.ts';

// PostgreSQL and the fleet (no pg loaded: PgMissingError is what importing durable-agent/postgres without it throws).
export { PgMissingError } from './store/pg/pg-missing.ts';
export { DatabaseUrlMissingError } from './store/pg/database-url.ts';
export { LeaseLostError, SchemaVersionError } from './store/pg/pg-errors.ts';
// A fleet run's limits raised (durable-agent raise): a run not stopped at a limit, or a limit that is no raise.
export { LimitNotRaisedError, RaiseRefusedError } from './fleet/raise-errors.ts';
export type { LimitName, RaiseProblem } from './fleet/raise-errors.ts';

// The HTTP API (createServer, durable-agent serve): a server given no folder or fleet, or no token; a token not NAME:SECRET.
export { ServePlaceError } from './serve/serve-errors.ts';
export { ApiTokenFormatError } from './access/access-errors.ts';
