/**
 * durable-agent: start a run, resume it, and reach it from another process, with your tools and
 * model. The other entries keep what most programs never load: every error class in
 * durable-agent/errors, the test kit in durable-agent/testing, the PostgreSQL store and the fleet
 * in durable-agent/postgres. A default lives on its option's documentation, not in a constant.
 *
 * @module durable-agent
 */

// Start and resume: a run's options, and what it reports while it goes and when it stops.
export { resumeRun, startRun } from './runtime/run-api.ts';
export type { ResumeOptions, RunParts, StartOptions } from './runtime/run-api.ts';
export type { Lang } from './lang/lang.ts';
export type { RunEvent, RunObserver, RunResult, WaitingCall } from './core/run-events.ts';
export type { CompactionMode, CompactionOptions } from './compaction/compaction-settings.ts';
export type { ClearToolUsesOptions } from './compaction/clear-tool-uses.ts';
export type { Budget, BudgetName, BudgetStop } from '../machines/agent-loop.types.ts';
export type { DecisionHandler, DecisionReply, DecisionRequest } from './awaits/decision-step.ts';
export type { RequireApproval } from './awaits/needs-decision.ts';
export type { CrashAction, CrashHandler } from './runtime/crash-points.ts';
export type { InspectedRun, RunInspector } from './runtime/run-inspection.ts';

// An agent defined once (model, instructions, tools, policies), versioned: startRun({ agent, task, store }), and a fleet's workers.
export { defineAgent } from './agent/agent-definition.ts';
export { childRunIdOf, subagentTool } from './subagent/subagent-tool.ts';
export { childRunsOf } from './runtime/run-tree.ts';
export { treePendingDecisions } from './runtime/tree-decisions.ts';

// A webhook receiver's check of a fleet's signed requests (pure crypto: no pg, no runtime).
export { verifyWebhookSignature } from './fleet/webhook-signature.ts';
export type { VerifiedWebhook, VerifyWebhookOptions, WebhookEventBody, WebhookEventType, WebhookHeaders } from './fleet/webhook-signature.ts';
export type { SubagentInput, SubagentToolOptions } from './subagent/subagent-tool.ts';
export type { ChildRun } from './runtime/run-tree.ts';
export type { TreePendingDecision } from './runtime/tree-decisions.ts';
export type { AgentDefinition, AgentSpec } from './agent/agent-definition.ts';
export type { AgentResumeOptions, AgentStartOptions } from './runtime/run-api.ts';
export type { PinnedAgent } from './store/journal/journal-record.ts';

// A run from outside (status, history, decisions, cancel, pause, fork, prune): one handle, one options object a call.
export { openRun } from './runtime/run-handle.ts';
export type { OpenRunOptions, RunHandle } from './runtime/run-handle.ts';
export type { ContinuedStep, HistoryStep, PendingCallStatus, RunStatus } from './runtime/run-status.ts';
export type { DecideInput, DecideOptions, PendingDecision } from './awaits/decide.ts';
// Durable waits: the wait tool (its calls sleep until a time or an event, through the run's decisions) and an event sent to a run.
export { waitTool } from './awaits/wait-tool.ts';
export type { WaitInput, WaitToolOptions } from './awaits/wait-tool.ts';
export { sendSignal } from './awaits/send-signal.ts';
export type { SentSignal, SignalInput } from './awaits/send-signal.ts';
export type { Signal, SignalDelivery } from './store/inbox/signal-inbox.ts';
export type { ControlOptions, ControlOutcome } from './runtime/cancel-run.ts';
export type { ControlInbox, ControlKind, ControlRequest } from './control/control-request.ts';
export type { ForkOptions, ForkResult } from './fork/fork-run.ts';
export type { ParentCallAfterFork } from './fork/fork-plan.ts';
export type { FailedRemoval, KeptRun, PrunedRun, PruneReport } from './prune/prune-archive.ts';
export type { PruneCandidate, PruneOptions } from './prune/prune-plan.ts';

// Sealed runs: the master keys a run is sealed with (a ring, from the environment or a key file, or a hook whose KMS holds the key).
export { KeyRing, keyRingFromEnv, keyRingFromFile, parseKeyList } from './seal/keys.ts';
export type { HookWrap, KeyHook, KeysGiven, MasterKeys } from './seal/keys.ts';

// Tools: a tool's definition, and a call's idempotency key (the same across crashes; a fork's calls have keys of their own).
export { defineTool } from './tools/tool.ts';
export type { StandardJSONSchemaV1, StandardSchemaToolDefinition, StandardSchemaV1, ToolContext, ToolDefinition, VerifyAnswer } from './tools/tool.ts';
export type { ToolAnnotations, TraitSources } from './tools/tool.ts';
export { idempotencyKeyFor } from './tools/execute-call.ts';
export { bashTool, memoryTool, textEditorTool, type BashOptions, type TextEditorOptions } from './tools/anthropic/index.ts';
export { readOnlyFor, type AnthropicDefinedType } from './tools/tool.ts';

// Models: Claude, MCP servers' tools, and the list prices a cost budget counts by.
export type { Model, ModelRequest, ModelTraits, StreamDelta, ToolSpec } from './model/model.ts';
export type { AnthropicModelOptions } from './model/anthropic-model.ts';
export type { ClaudeRequestOptions, Effort, ServiceTier, ThinkingOption, ToolChoiceOption } from './model/request-options.ts';
export type { CodeExecutionOption, ServerToolsOption, UserLocationOption, WebFetchOption, WebSearchOption } from './model/server-tools.ts';
export type { McpConfig, McpHttpServer, McpServerConfig, McpStdioServer, McpToolOverride } from './mcp/config.ts';
export type { McpToolSet, McpToolsOptions } from './mcp/mcp-tools.ts';
export { priceOf, type ModelPrice } from './model/prices.ts';

/** A real Claude model; loaded on demand because the SDK is slow to import. */
export async function anthropicModel(options: import('./model/anthropic-model.ts').AnthropicModelOptions) {
  const { anthropicModel: create } = await import('./model/anthropic-model.ts');
  return create(options);
}

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

/**
 * The HTTP API of `durable-agent serve` (docs/serve.md): start, follow and steer runs over a
 * folder (driven here, with the agents given) or a fleet (its database). Loads the server, and
 * for a fleet pg, only when called.
 */
export async function createServer(options: import('./serve/create-server.ts').ServerOptions): Promise<import('./serve/create-server.ts').RunningServer> {
  const { createServer: create } = await import('./serve/create-server.ts');
  return create(options);
}
export type { RunningServer, ServerOptions } from './serve/create-server.ts';
export type { Caller, CallerRole, TokenCheck } from './access/caller.ts';

// Stores: the file store, and the interface another store implements.
export { FileStore } from './store/file-store.ts';
export { FileRuns } from './store/file-runs.ts';
export type { StoredRunEntry } from './store/file-runs.ts';
// A folder's runs or a fleet's (a database: loads durable-agent/postgres's side then), each as its summary.
export { listRuns } from './fleet/list-runs.ts';
export type { ListOptions, RunListing } from './runtime/list-runs.ts';
export type { RunCategory, RunSummary, RunWaitingOn } from './runtime/run-summary.ts';
export type { FleetRunSummary } from './fleet/fleet-summary.ts';
export type { FileStoreOptions } from './store/file-store.ts';
export type { DecisionInbox, InboxDecision, LockOptions, LockTakeOver, RunLock, RunStore } from './store/store.ts';
export type { ForkOrigin, JournalHeader, PinnedAnnotations, PinnedDecisionPolicy, PinnedPrice, PinnedRequest, ReconcileNote, ReconcileRule, RunOrigin } from './store/journal/journal-record.ts';

// The loop's machine, as `inspect` reports a run, and the state it keeps.
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

// Errors: the base every one extends (its `kind` says what to do); each class is in durable-agent/errors.
export { DurableAgentError, ERROR_KINDS, OptionalDependencyMissingError } from './util/durable-agent-error.ts';
export type { ErrorKind } from './util/durable-agent-error.ts';
