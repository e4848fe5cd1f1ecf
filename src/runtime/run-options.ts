/**
 * What a program gives startRun and resumeRun (the CLI gives the same), and how an agent
 * definition fills in what the call leaves out.
 */
import type { Context, Tracer } from '@opentelemetry/api';
import { type AgentInput, type Budget, MAX_PAUSES_IN_A_ROW } from '../../machines/agent-loop.types.ts';
import type { DecisionHandler } from '../awaits/decision-step.ts';
import type { RequireApproval } from '../awaits/needs-decision.ts';
import type { ClearToolUsesOptions } from '../compaction/clear-tool-uses.ts';
import type { CompactionOptions } from '../compaction/compaction-settings.ts';
import type { RunObserver } from '../core/run-events.ts';
import type { Capability } from '../core/session.ts';
import type { InContext } from '../core/run-settings.ts';
import type { Lang } from '../lang/lang.ts';
import type { Model } from '../model/model.ts';
import type { CalledBy } from '../store/journal/journal-record.ts';
import type { KeysGiven } from '../seal/keys.ts';
import type { RunStore } from '../store/store.ts';
import type { ChildRuns } from '../tools/calling-run.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { type AgentDefinition, agentModel } from '../agent/agent-definition.ts';
import type { CrashAction, CrashPoints } from './crash-points.ts';
import { hasAgent } from './agent-run.ts';
import type { RunInspector } from './run-inspection.ts';

export const DEFAULT_MAX_TURNS = 20;
export const DEFAULT_MAX_TOKENS = 4096;

export interface RunParts {
  store: RunStore;
  /**
   * The master keys the user holds (a KeyRing, or a hook whose KMS holds the key; see
   * docs/encryption.md): a run started with them is sealed, its content unreadable without them;
   * a sealed run is resumed with them. A run started without keys stays plain.
   */
  keys?: KeysGiven | undefined;
  model: Model;
  tools: readonly ToolDefinition[];
  /** Receives progress events (saves, tool calls, reconcile decisions). */
  observer?: RunObserver | undefined;
  /** Arms crash points, e.g. "after-effect-write:3" (see CRASH_AFTER). */
  crashAfter?: string | undefined;
  /**
   * What an armed crash point does: 'throw' SimulatedCrash (the default; catch it and resume),
   * 'exit' the process with code 137 as a kill would, or a function of the crash label.
   */
  onCrash?: CrashAction | undefined;
  /** Crash points made by the caller (to read which were passed); replaces crashAfter and onCrash. */
  crashPoints?: CrashPoints | undefined;
  /** How long one tool call may run, in milliseconds, before it becomes an error result. Default: 120000 (2 minutes). */
  toolTimeoutMs?: number | undefined;
  /**
   * How many calls of one reply run at once, 1 to 64. Default: 4. Only calls that may overlap
   * (read-only tools, or tools marked concurrencySafe) run side by side; the others run alone,
   * in the model's order. 1: every call runs after the one before it.
   */
  toolConcurrency?: number | undefined;
  /** The most tokens the model may write in one reply. Default: 4096. */
  maxTokens?: number | undefined;
  /**
   * The language of what the run itself tells the model: the error result of a call whose state
   * a resume cannot know ('en' or 'pt'; another is refused, UnknownLangError). Default: 'en'. Not
   * kept with the run: each process says it in the language it is given.
   */
  lang?: Lang | undefined;
  /** Abort to stop the run at the next step boundary (SIGTERM in a worker, a lost lease). */
  signal?: AbortSignal | undefined;
  /**
   * What drives the run: 'demo', 'run', 'worker'; 'api' for a program. Default: 'api'. Recorded
   * in the journal's header with the model and the tools when the run starts; a resume by
   * another command or with other tools is refused unless allowToolChange is set.
   */
  command?: string | undefined;
  /**
   * Take the run's lock at once, whoever holds it (--take-over): for a holder that is gone, or
   * suspended, when the user is sure. A live holder stops before its next write.
   */
  takeOver?: boolean | undefined;
  /**
   * Receives XState inspection events (`@xstate.actor`, `@xstate.event`, `@xstate.snapshot`) for
   * every transition the run takes, once saved: pass `createSkyInspector().inspect` from
   * @statelyai/inspect, or any function or observer, as to `createActor(machine, { inspect })`.
   */
  inspect?: RunInspector | undefined;
  /**
   * An OpenTelemetry tracer (`trace.getTracer(...)` from @opentelemetry/api, your SDK behind it):
   * the run is traced into it (a span per session, model call, tool call and save; see the
   * README). The run's trace context is kept in the journal, so a resume joins the same trace.
   */
  tracer?: Tracer | undefined;
  /** With tracer: export messages, tool inputs and results too (API keys taken out). Off by default. */
  traceContent?: boolean | undefined;
  /** With tracer: the OpenTelemetry Context the run's spans hang under instead of the active one (a sub-agent's run: its parent's execute_tool span). */
  traceParent?: Context | undefined;
  /**
   * Where the runs its sub-agent calls make are queued, each driven by whichever worker takes it
   * up while this run waits without being driven (a fleet worker gives it). Absent: a sub-agent
   * call drives its child itself, in this process.
   */
  childRuns?: ChildRuns | undefined;
  /**
   * Hooks this process asks before each model call, after those of the run's own settings (a
   * fleet worker's: its tenant's quota and rate limit). Not pinned: each process gives its own.
   */
  limits?: readonly Capability[] | undefined;
  /**
   * Tools whose calls need a person's approval before they run: by name, or 'side-effects' for
   * every tool that is not read-only (a tool can also say so itself: needsApproval). A name the
   * run does not offer is refused (UnknownApprovalToolError).
   */
  requireApproval?: RequireApproval | undefined;
  /** Offer the model an ask_user tool: its question waits for a person's answer, which becomes its result. */
  allowQuestions?: boolean | undefined;
  /** Asked for a decision when a call waits for one and the inbox has none; null leaves it to the inbox. */
  onDecision?: DecisionHandler | undefined;
  /** False: with no decision at hand, stop with status 'waiting' instead of waiting (resume once decided). Default: true. */
  wait?: boolean | undefined;
  /** Deny, by 'deadline', a call still undecided this many milliseconds after it began to wait. */
  decisionTimeoutMs?: number | undefined;
  /**
   * Write the whole state (a snapshot record) every this many records, so that a resume reads
   * only from the last one; 0: only at compactions (every compaction's record is one). Default:
   * the environment's DURABLE_AGENT_SNAPSHOT_EVERY, else 0 (a run that never compacts would
   * restate a growing conversation each time).
   */
  snapshotEvery?: number | undefined;
  /**
   * Spending limits, checked before each model call: reaching one stops the run, resumably, with
   * status 'stoppedAtBudget'. Kept with the run: a resume without one applies the run's; a resume
   * with one replaces the limits it names (a larger one goes on). maxCostUsd needs the model's
   * price (src/model/prices.ts, or Model.price): refused otherwise (BudgetPriceError).
   */
  budget?: Budget | undefined;
  /**
   * How the run keeps its context under the model's window (see the README, Compaction): mode
   * 'server' (the API compacts; the default for models that say they support it), 'client' (the
   * runtime has the model summarise older turns; the default when a window is known), or 'off'.
   * Pinned when the run starts; a resume may change contextWindow and triggerRatio, not the mode.
   */
  compaction?: CompactionOptions | undefined;
  /**
   * Have the API clear old tool results from what the model reads (clear_tool_uses_20250919), true
   * for the defaults; the journal keeps every result whole. Pinned when the run starts; a resume
   * cannot turn it on or off, and may change its numbers. Needs a Claude model through the API.
   */
  clearToolUses?: ClearToolUsesOptions | boolean | undefined;
  /**
   * The agent definition the run is driven by (defineAgent): its name and version are pinned in
   * the header when the run starts, and a resume or attach with another version is refused
   * (AgentVersionMismatchError) unless the definition declares that version compatible.
   */
  agent?: AgentDefinition | undefined;
  /**
   * The module the agent was loaded from (the CLI's `run --agents FILE`, as an absolute path):
   * kept with what started the run (RunOrigin.agentsModule) so that the commands that say how to
   * go on with the run can name it. Not compared on resume.
   */
  agentsModule?: string | undefined;
}

export interface StartOptions extends RunParts {
  task: string;
  system?: string | null | undefined;
  /** The most turns (replies that call tools) the run runs; a reply past them stops it, resumably, in stoppedAtMaxTurns. Default: 20. */
  maxTurns?: number | undefined;
  /** The most pause_turn replies in a row the run continues after; one more fails it, resumably. Default: 8. */
  maxPausesInARow?: number | undefined;
  /** Archive an unfinished run found in the store instead of refusing to start. */
  fresh?: boolean | undefined;
  /**
   * The run's id (1 to 128 letters, digits, ".", "_" or "-"; default: the store's, when it is
   * opened by id as FileRuns.store(id) opens it, else a new random one). Starting under an id
   * that exists attaches to that run instead of starting again: see ifExists.
   */
  runId?: string | undefined;
  /**
   * What starting under an id that exists does. 'attach' (the default): a finished run (done,
   * failed, cancelled) answers with its stored result and runs nothing; an unfinished one is
   * resumed, reconciled as any resume; a run of that id started with another task, system prompt
   * or model is refused (RunIdTakenError, nothing written). 'new': the stored run is archived
   * (never deleted) and a new one starts under the same id.
   */
  ifExists?: 'attach' | 'new' | undefined;
  /** The run and call that start this run (a sub-agent's child run), kept in its header: status, list and pending show the tree. */
  calledBy?: CalledBy | undefined;
  /**
   * Whose the run is (1 to 64 letters, digits, ".", "_" or "-"): pinned in its header, shown and
   * filtered by list, status and the console, and inherited by the runs its sub-agent calls
   * start. Default: the default tenant's.
   */
  tenant?: string | undefined;
}

export interface ResumeOptions extends RunParts {
  /** A new MAX_TURNS: reopens a run stopped at its limit when larger than the turns taken. */
  maxTurns?: number | undefined;
  /**
   * Lift the run's stop at its tenant's monthly quota (a fleet worker does, when the tenant's
   * quota was raised): the run goes on to the call it stopped before, and the quota is checked again.
   */
  liftTenantQuota?: boolean | undefined;
  /**
   * Go on although the journal ends inside its last committed record (refused otherwise, with
   * StoreLostRecordError): the run resumes from the record before, and whatever the lost record
   * had started may happen again. Safe when a power loss caused it; see the README.
   */
  acceptLostRecord?: boolean | undefined;
  /** Go on although the command or the tools (names, input schemas) differ from those that started the run. */
  allowToolChange?: boolean | undefined;
  /**
   * The rule for decisions pinned when the run started (requireApproval, allowQuestions,
   * decisionTimeoutMs) applies to every resume, joined with what is given now; with this, what
   * is given now replaces it (a looser rule on purpose). Otherwise a looser deadline is refused.
   */
  replaceDecisionPolicy?: boolean | undefined;
  /**
   * Continue a finished (`done`) conversation: this becomes the user's next message and the
   * model is asked again with the whole conversation. Refused (ContinueRefusedError, nothing
   * written) when empty, when the run is not done, or when no turn is left (give maxTurns).
   */
  message?: string | undefined;
  /**
   * Leave a pause asked of the run in place (a fleet worker: its claim skips paused runs, so a
   * pause it finds was asked after it claimed, and is honoured at the first step). Otherwise a
   * resume clears the pause: it is the "go on".
   */
  keepPause?: boolean | undefined;
}

/** startRun's options with an agent: model and tools come from it unless given. */
export type AgentStartOptions = Omit<StartOptions, 'model' | 'tools' | 'agent'> & { agent: AgentDefinition; model?: Model | undefined; tools?: readonly ToolDefinition[] | undefined };

/** resumeRun's options with an agent: model and tools come from it unless given. */
export type AgentResumeOptions = Omit<ResumeOptions, 'model' | 'tools' | 'agent'> & { agent: AgentDefinition; model?: Model | undefined; tools?: readonly ToolDefinition[] | undefined };

/** A start's full options: with an agent, its parts under what the call gives. */
export async function startOptionsOf(given: StartOptions | AgentStartOptions): Promise<StartOptions> {
  if (!hasAgent(given)) return given as StartOptions;
  const options = given as AgentStartOptions;
  const { agent } = options;
  return {
    ...options,
    model: options.model ?? (await agentModel(agent)),
    tools: options.tools ?? agent.tools,
    system: options.system ?? agent.system,
    maxTurns: options.maxTurns ?? agent.maxTurns,
    maxTokens: options.maxTokens ?? agent.maxTokens,
    requireApproval: options.requireApproval ?? agent.requireApproval,
    allowQuestions: options.allowQuestions ?? agent.allowQuestions,
    decisionTimeoutMs: options.decisionTimeoutMs ?? agent.decisionTimeoutMs,
    budget: options.budget ?? agent.budget,
    compaction: options.compaction ?? agent.compaction,
    clearToolUses: options.clearToolUses ?? agent.clearToolUses,
    agent,
  };
}

/**
 * A resume's full options. What the run pinned when it started (its turns, budget, compaction,
 * rule for decisions) stays the run's: the agent gives only what a resume needs of it.
 */
export async function resumeOptionsOf(given: ResumeOptions | AgentResumeOptions): Promise<ResumeOptions> {
  if (!hasAgent(given)) return given as ResumeOptions;
  const options = given as AgentResumeOptions;
  const { agent } = options;
  return {
    ...options,
    model: options.model ?? (await agentModel(agent)),
    tools: options.tools ?? agent.tools,
    maxTokens: options.maxTokens ?? agent.maxTokens,
    agent,
  };
}

/** What a new run's machine starts from: the task, and the limits it runs under. */
export type TaskOptions = Pick<StartOptions, 'task' | 'system' | 'maxTurns' | 'maxPausesInARow'>;

/** The machine's input for a new run: its task and limits, with what its settings keep in its context (its budget). */
export function machineInputOf(given: TaskOptions, kept: InContext | undefined): AgentInput & { maxPausesInARow: number } {
  return { task: given.task, system: given.system ?? null, maxTurns: given.maxTurns ?? DEFAULT_MAX_TURNS, maxPausesInARow: pauseLimitOf(given.maxPausesInARow), ...kept };
}

function pauseLimitOf(given: number | undefined): number {
  const limit = given ?? MAX_PAUSES_IN_A_ROW;
  if (!Number.isSafeInteger(limit) || limit < 0) {
    throw new RangeError(`maxPausesInARow must be a whole number of 0 or more (got ${String(limit)}); nothing was started.`);
  }
  return limit;
}
