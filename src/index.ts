/** durable-agent's public API: everything the CLI does goes through these. */
export { agentLoopMachine } from '../machines/agent-loop.machine.ts';
export type {
  AgentContext,
  Cancellation,
  AgentStateName,
  ContentBlock,
  Decision,
  DecisionNeed,
  Message,
  ModelReply,
  PendingCall,
  RunFailure,
  StopReason,
  TokenUsage,
  ToolOutcome,
  ToolResultContent,
  Verdict,
} from '../machines/agent-loop.types.ts';
export { MAX_PAUSES_IN_A_ROW } from '../machines/agent-loop.types.ts';
export { DurableAgentError, ERROR_KINDS, OptionalDependencyMissingError } from './util/durable-agent-error.ts';
export type { ErrorKind } from './util/durable-agent-error.ts';
export { defineTool } from './tools/tool.ts';
export type { StandardJSONSchemaV1, StandardSchemaToolDefinition, StandardSchemaV1, ToolContext, ToolDefinition, VerifyAnswer } from './tools/tool.ts';
export { idempotencyKeyFor } from './tools/execute-call.ts';
export type { Model, ModelRequest, ModelTraits, StreamDelta, ToolSpec } from './model/model.ts';
export { MissingApiKeyError, ModelCallError } from './model/model.ts';
export { endTurnReply, scriptedModel, ScriptExhaustedError, stopReply, toolUseReply } from './model/scripted-model.ts';
export type { ScriptedStep } from './model/scripted-model.ts';
export { DEFAULT_MAX_TOKENS, DEFAULT_MAX_TURNS, resumeRun, startRun } from './runtime/run-api.ts';
export type { ResumeOptions, RunParts, StartOptions } from './runtime/run-api.ts';
export { CompactionSettingsError, DEFAULT_TRIGGER_RATIO } from './compaction/compaction-settings.ts';
export type { CompactionMode, CompactionOptions } from './compaction/compaction-settings.ts';
export { DEFAULT_CLEAR_KEEP, DEFAULT_CLEAR_TRIGGER_RATIO, DEFAULT_CLEAR_TRIGGER_TOKENS } from './compaction/clear-tool-uses.ts';
export type { ClearToolUsesOptions } from './compaction/clear-tool-uses.ts';
export type { RunEvent, RunObserver, RunResult, WaitingCall } from './core/run-events.ts';
export { ASK_USER } from './approval/ask-user.ts';
export { DECISION_POLL_MS, DecisionReplyError } from './approval/decision-step.ts';
export type { DecisionHandler, DecisionReply, DecisionRequest } from './approval/decision-step.ts';
export { UnknownApprovalToolError } from './approval/needs-decision.ts';
export type { RequireApproval } from './approval/needs-decision.ts';
export { InspectedRunSendError } from './runtime/run-inspection.ts';
export type { InspectedRun, RunInspector } from './runtime/run-inspection.ts';
export { readRunHistory, readRunStatus } from './runtime/run-status.ts';
export type { ContinuedStep, HistoryStep, RunStatus } from './runtime/run-status.ts';
export { CrashPoints, CrashSpecError, SIMULATED_CRASH_EXIT_CODE, SimulatedCrash } from './runtime/crash-points.ts';
export type { CrashAction, CrashHandler } from './runtime/crash-points.ts';
export { DEFAULT_SNAPSHOT_EVERY, SNAPSHOT_EVERY_ENV, SnapshotEveryError, snapshotsAtEvent } from './runtime/snapshot-policy.ts';
export { ContinueRefusedError, type ContinueProblem } from './core/continue-run.ts';
export { RunOriginMismatchError } from './runtime/run-origin.ts';
export { DEFAULT_TOOL_CONCURRENCY, ToolConcurrencyError } from './runtime/tool-scheduler.ts';
export type { JournalHeader, PinnedDecisionPolicy, RunOrigin } from './store/journal-record.ts';
export type { DecisionInbox, InboxDecision, LockOptions, LockTakeOver, RunLock, RunStore } from './store/store.ts';
export { FileStore } from './store/file-store.ts';
export { decide, pendingDecisions } from './approval/decide.ts';
export type { DecideInput, DecideOptions, PendingDecision } from './approval/decide.ts';
export { DecisionRefusedError, PolicyLoosenedError } from './approval/decision-errors.ts';
export type { DecisionRefusal } from './approval/decision-errors.ts';
export { FileDecisionInbox } from './store/inbox/file-decision-inbox.ts';
export { MemoryStore } from './store/memory-store.ts';
export {
  RunExistsError,
  RunLockedError,
  RunLockLostError,
  StoreAccessError,
  StoreCorruptError,
  StoreLostRecordError,
  StoreMissingError,
  StoreVersionError,
  StoreWriteError,
} from './store/errors.ts';
/** Thrown when durable-agent/postgres is imported without pg installed (catch it around a dynamic import). */
export { PgMissingError } from './store/pg/pg-missing.ts';

/** A real Claude model; loaded on demand because the SDK is slow to import. */
export async function anthropicModel(options: import('./model/anthropic-model.ts').AnthropicModelOptions) {
  const { anthropicModel: create } = await import('./model/anthropic-model.ts');
  return create(options);
}

/** MCP tools: the errors a config or a server can be refused with (no SDK needed to catch them). */
export {
  McpConfigFieldError,
  McpConfigSyntaxError,
  McpConfigUnreadableError,
  McpSdkMissingError,
  McpServerStartError,
  McpVerifyToolError,
} from './mcp/errors.ts';
export type { McpConfig, McpHttpServer, McpServerConfig, McpStdioServer, McpToolOverride } from './mcp/config.ts';
export type { McpToolSet, McpToolsOptions } from './mcp/mcp-tools.ts';
export type { ToolAnnotations, TraitSources } from './tools/tool.ts';
export type { PinnedAnnotations, ReconcileNote, ReconcileRule } from './store/journal-record.ts';
export { forkRun } from './fork/fork-run.ts';
export type { ForkOptions, ForkResult } from './fork/fork-run.ts';
export type { ParentCallAfterFork } from './fork/fork-plan.ts';
export { ForkRefusedError, type ForkProblem } from './fork/fork-errors.ts';
export type { ForkOrigin } from './store/journal-record.ts';
export { pruneRuns } from './prune/prune-archive.ts';
export type { FailedRemoval, KeptRun, PrunedRun, PruneReport } from './prune/prune-archive.ts';
export { PruneOptionError, PruneRuleMissingError } from './prune/prune-plan.ts';
export type { PruneCandidate, PruneOptions } from './prune/prune-plan.ts';

/**
 * The tools of the MCP servers in `config` (an .mcp.json path or its object), as
 * `mcp__<server>__<tool>`; close() stops the servers. Loads @modelcontextprotocol/sdk, an optional
 * peer dependency, only when called (McpSdkMissingError when it is not installed).
 */
export async function mcpTools(
  config: import('./mcp/config.ts').McpConfig | string,
  options?: import('./mcp/mcp-tools.ts').McpToolsOptions,
): Promise<import('./mcp/mcp-tools.ts').McpToolSet> {
  const { mcpTools: connect } = await import('./mcp/mcp-tools.ts');
  return connect(config, options);
}

// Cancel and pause.
export { cancelRun, pauseRun, unpauseRun, controlRequestsOf } from './runtime/cancel-run.ts';
export type { ControlOptions, ControlOutcome } from './runtime/cancel-run.ts';
export { ControlRefusedError, RunCancelledError } from './control/control-request.ts';
export type { ControlInbox, ControlKind, ControlRequest } from './control/control-request.ts';
export { RunPausedError } from './control/run-control.ts';
export { FileControlInbox } from './store/inbox/file-control-inbox.ts';
/** Budgets: spending limits checked before each model call; the price table behind a cost budget. */
export type { Budget, BudgetName, BudgetStop } from '../machines/agent-loop.types.ts';
export { BudgetPriceError } from './budget/budget.ts';
export { priceOf, type ModelPrice } from './model/prices.ts';
