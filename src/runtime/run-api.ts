/**
 * The programmatic entry points: start a run, resume it. The CLI goes through these too.
 */
import { randomUUID } from 'node:crypto';
import type { Context, Tracer } from '@opentelemetry/api';
import { initialTransition } from 'xstate';
import { announcedEffectOf, effectOfActions } from '../../machines/agent-loop.effects.ts';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import { type Budget, MAX_PAUSES_IN_A_ROW } from '../../machines/agent-loop.types.ts';
import { approvalCapability } from '../approval/approval-capability.ts';
import { askUserTool } from '../approval/ask-user.ts';
import type { DecisionHandler } from '../approval/decision-step.ts';
import { checkDecisionPolicy, type RequireApproval } from '../approval/needs-decision.ts';
import { canNeedDecisions, effectivePolicy, pinnedPolicyOf } from '../approval/pinned-policy.ts';
import { RunControl } from '../control/run-control.ts';
import { controlAtResume, refuseCancelled, settleControl } from '../control/run-end.ts';
import { budgetCapability, resumedBudget, startingBudget } from '../budget/budget.ts';
import type { Model } from '../model/model.ts';
import { RunExistsError } from '../store/errors.ts';
import { checkRunId, RunIdMismatchError } from '../store/run-id.ts';
import { foldJournal } from '../store/fold-journal.ts';
import { encodeRecord, snapshotContextOf } from '../store/journal-codec.ts';
import { JOURNAL_FORMAT, JOURNAL_VERSION_BUDGETS, JOURNAL_VERSION_CHILD_AWAITS, JOURNAL_VERSION_DECISIONS, JOURNAL_VERSION_PLAIN } from '../store/journal-record.ts';
import { childRunCallOf } from '../tools/child-run-call.ts';
import type { CalledBy, JournalHeader, PinnedClearToolUses, PinnedCompaction } from '../store/journal-record.ts';
import { type CompactionOptions, triggerTokensOf } from '../compaction/compaction-settings.ts';
import { type ContextSettings, contextSettingsForResume, contextSettingsForStart } from '../compaction/context-settings.ts';
import { ContextCompaction } from '../compaction/context-compaction.ts';
import { withServerCompaction } from '../compaction/server-compaction.ts';
import { type ClearToolUsesOptions, withClearToolUses } from '../compaction/clear-tool-uses.ts';
import type { RunLock, RunStore } from '../store/store.ts';
import { DEFAULT_TOOL_TIMEOUT_MS } from '../tools/execute-call.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import type { ChildRuns } from '../tools/calling-run.ts';
import { ToolRegistry } from '../tools/tool-registry.ts';
import { checkContinue, checkMessageText } from '../core/continue-run.ts';
import type { CrashAction } from './crash-points.ts';
import { CrashPoints, crashHandlerOf } from './crash-points.ts';
import type { RunObserver, RunResult } from '../core/run-events.ts';
import type { Capability } from '../core/session.ts';
import type { RunInspector } from './run-inspection.ts';
import { API_COMMAND, checkOrigin, runOriginOf } from './run-origin.ts';
import type { DriverParts } from './run-driver.ts';
import { SnapshotPolicy, snapshotEveryOf } from './snapshot-policy.ts';
import { RunDriver } from './run-driver.ts';
import type { RunTracing } from '../telemetry/run-tracing.ts';
import { tracedRun, withTracing } from './traced-run.ts';
import { type Attached, attachTo } from './attach-run.ts';
import { type AgentDefinition, agentModel } from '../agent/agent-definition.ts';
import { checkAgentPin, hasAgent, pinOf } from './agent-run.ts';
import { toolConcurrencyOf } from './tool-scheduler.ts';

export const DEFAULT_MAX_TURNS = 20;
export const DEFAULT_MAX_TOKENS = 4096;

export interface RunParts {
  store: RunStore;
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
}

export interface ResumeOptions extends RunParts {
  /** A new MAX_TURNS: reopens a run stopped at its limit when larger than the turns taken. */
  maxTurns?: number | undefined;
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

/** A start's full options: the agent's parts under what the call gives. */
async function startOptionsOf(options: AgentStartOptions): Promise<StartOptions> {
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
async function resumeOptionsOf(options: AgentResumeOptions): Promise<ResumeOptions> {
  const { agent } = options;
  return {
    ...options,
    model: options.model ?? (await agentModel(agent)),
    tools: options.tools ?? agent.tools,
    maxTokens: options.maxTokens ?? agent.maxTokens,
    agent,
  };
}

/** With `agent` (defineAgent), the model, tools and policies come from it unless given, and its version is pinned. */
export async function startRun(given: StartOptions | AgentStartOptions): Promise<RunResult> {
  const options = hasAgent(given) ? await startOptionsOf(given as AgentStartOptions) : (given as StartOptions);
  return tracedRun(options, 'start', options.command ?? API_COMMAND, (tracing) => start(options, tracing));
}

async function start(options: StartOptions, tracing: RunTracing | null): Promise<RunResult> {
  const { store } = options;
  const givenId = runIdOf(options);
  const { compaction, clearing: clearToolUses } = await contextSettingsForStart(options, options.model, toolNamesOf(options));
  const parts = driverParts(options, tracing, compaction, clearToolUses);
  const budgeted = startingBudget(options.budget, options.model);
  const lock = await lockRun(options, parts);
  try {
    const startOver = options.fresh === true || options.ifExists === 'new';
    if (givenId !== null && !startOver) {
      const attached = await attachToStored(store, givenId, options);
      if (attached && 'result' in attached) {
        parts.observer({ type: 'attached', runId: givenId, status: attached.result.status, location: store.location });
        parts.observer({ type: 'finished', result: attached.result });
        return attached.result;
      }
      // Under the lock taken here: no other process can start or drive it in between.
      if (attached) return await resume(options, tracing, lock);
    }
    const archivedPrevious = await clearFinishedRun(store, startOver);
    const runId = givenId ?? randomUUID();
    const maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
    const input = { task: options.task, system: options.system ?? null, maxTurns, maxPausesInARow: pauseLimitOf(options), ...budgeted };
    const [snapshot, actions] = initialTransition(agentLoopMachine, input);
    const record = encodeRecord(null, {
      seq: 0,
      at: Date.now(),
      event: 'START',
      state: 'awaitingModel',
      context: snapshot.context,
      note: { started: { pid: process.pid } },
    });
    const startedBy = runOriginOf(options.command ?? API_COMMAND, options.model.name, offeredTools(options));
    const trace = tracing?.beginRun(runId, { model: options.model.name, task: options.task, maxTurns });
    const decisionPolicy = pinnedPolicyOf(options);
    // The lowest version that reads the run right: a release before a feature the run uses would misread it.
    const version = options.childRuns && offeredTools(options).some((tool) => childRunCallOf(tool))
      ? JOURNAL_VERSION_CHILD_AWAITS
      : budgeted.budget || compaction || clearToolUses ? JOURNAL_VERSION_BUDGETS : canNeedDecisions(decisionPolicy, offeredTools(options)) ? JOURNAL_VERSION_DECISIONS : JOURNAL_VERSION_PLAIN;
    const header = { format: JOURNAL_FORMAT, version, runId, createdAt: record.at, startedBy, ...(trace ? { trace } : {}), ...(decisionPolicy ? { decisionPolicy } : {}), ...(compaction ? { compaction } : {}), ...(clearToolUses ? { clearToolUses } : {}), ...(options.agent ? { agent: pinOf(options.agent) } : {}), ...(options.calledBy ? { calledBy: { runId: options.calledBy.runId, toolUseId: options.calledBy.toolUseId } } : {}), ...pinnedModelOf(options.model) } as const;
    const receipt = await store.create(header, record);
    const snapshots = new SnapshotPolicy(snapshotEveryOf(options.snapshotEvery), record, record);
    const driver = new RunDriver({ ...parts, snapshots }, runId, snapshot, { state: 'awaitingModel', context: snapshot.context, ledger: new Map() }, 1);
    parts.observer({
      type: 'started',
      runId,
      task: options.task,
      model: options.model.name,
      maxTurns,
      location: store.location,
      archivedPrevious,
    });
    await driver.announceCreated(record, receipt);
    return await settleControl(store, await driver.drive(effectOfActions(actions)));
  } finally {
    await lock.release();
  }
}

/** How the model is asked, and its price when it was given: pinned so that a resume asks and counts the same way (secrets never: Model.request holds none). */
function pinnedModelOf(model: Model): Pick<JournalHeader, 'request' | 'price'> {
  return { ...(model.request ? { request: model.request } : {}), ...(model.price ? { price: { ...model.price } } : {}) };
}

/** With `agent`, the model and tools come from it unless given; a run pinned to another version of it is refused. */
export async function resumeRun(given: ResumeOptions | AgentResumeOptions): Promise<RunResult> {
  const options = hasAgent(given) ? await resumeOptionsOf(given as AgentResumeOptions) : (given as ResumeOptions);
  return tracedRun(options, 'resume', options.command ?? API_COMMAND, (tracing) => resume(options, tracing));
}

/** `held`: the lock a start that attaches to a stored run already holds (and releases). */
async function resume(options: ResumeOptions, tracing: RunTracing | null, held: RunLock | null = null): Promise<RunResult> {
  const { store, message } = options;
  // Checked on a read that takes no lock and repairs nothing: a refused message writes nothing.
  if (message !== undefined) await checkContinuable(store, message, options.maxTurns);
  const lock = held ?? (await lockRun(options, driverParts(options, tracing)));
  try {
    // A definition that declares the run's version compatible has said its changes are safe for it.
    const allowChange = options.allowToolChange === true || (await declaredCompatible(store, options.agent));
    // The run's own rule for decisions, pinned when it started, joined with what is given now.
    const withPolicy = (header: JournalHeader): ResumeOptions => ({
      ...options,
      ...effectivePolicy(store.location, header, options, options.tools, options.replaceDecisionPolicy === true),
    });
    const offeredFor = (applied: ResumeOptions) => runOriginOf(options.command ?? API_COMMAND, options.model.name, offeredTools(applied));
    let pinned: ContextSettings | null = null;
    const loaded = await store.load({
      repair: true,
      fromLastSnapshot: true,
      acceptLostRecord: options.acceptLostRecord === true,
      // Before the store repairs anything: a resume refused for its origin or its rule changes nothing.
      checkHeader: (header) => {
        checkAgentPin(store.location, header, options.agent);
        checkOrigin(store.location, header, offeredFor(withPolicy(header)), allowChange);
        pinned = contextSettingsForResume(header, options, toolNamesOf(options), store.location);
      },
    });
    const applied = withPolicy(loaded.header);
    const { compaction, clearing } = pinned ?? contextSettingsForResume(loaded.header, options, toolNamesOf(options), store.location);
    const parts = driverParts(applied, tracing, compaction, clearing);
    const origin = checkOrigin(store.location, loaded.header, offeredFor(applied), allowChange);
    tracing?.joinRun(loaded.header);
    const view = foldJournal(store.location, loaded);
    refuseCancelled(store.location, view.state, view.context);
    const snapshot = agentLoopMachine.resolveState({ value: view.state, context: snapshotContextOf(view) });
    parts.budgetChange = resumedBudget(snapshot.context, options.budget, options.model);
    // Again under the lock: another process may have gone on since the check above.
    if (message !== undefined) checkContinue(store.location, message, view.state, snapshot.context, options.maxTurns);
    const [first, last] = [loaded.records[0]!.record, loaded.records[loaded.records.length - 1]!.record];
    const driver = new RunDriver(
      { ...parts, snapshots: new SnapshotPolicy(snapshotEveryOf(options.snapshotEvery), first, last) },
      loaded.header.runId,
      snapshot,
      { state: view.state, context: snapshot.context, ledger: view.ledger },
      last.seq + 1,
    );
    // A cancel asked while no process drove the run applies at once: nothing of the open turn is run again.
    if (await controlAtResume(store, view.state, options.keepPause === true)) {
      return await settleControl(store, await driver.drive(announcedEffectOf(view.state, snapshot.context)));
    }
    const lastStored = loaded.records[loaded.records.length - 1]!;
    return await settleControl(store, await driver.resume({ maxTurns: options.maxTurns, tornTail: loaded.tornTail, lastStored, origin, message }));
  } finally {
    if (!held) await lock.release();
  }
}

/** Whether the agent accepts the run's pinned version as another version of its own (compatibleWith). */
async function declaredCompatible(store: RunStore, agent: AgentDefinition | undefined): Promise<boolean> {
  if (!agent?.compatibleWith?.length) return false;
  const pinned = (await store.load({ fromLastSnapshot: true })).header.agent;
  return pinned !== undefined && pinned.name === agent.name && pinned.version !== agent.version && agent.compatibleWith.includes(pinned.version);
}

/** The id a start gives its run: the one asked for, the store's, or none (a new random one). */
function runIdOf(options: StartOptions): string | null {
  const asked = options.runId === undefined ? undefined : checkRunId(options.runId);
  const stores = options.store.runId;
  if (asked !== undefined && stores !== undefined && asked !== stores) throw new RunIdMismatchError(asked, stores, options.store.location);
  return asked ?? stores ?? null;
}

/**
 * The stored run of this id, if the store holds one: its result when it ended, or that it is to
 * be resumed. Null when the store holds no run, or a run of another id (a folder of one run
 * written before run ids): that one is cleared as any start clears it.
 */
async function attachToStored(store: RunStore, runId: string, options: StartOptions): Promise<Attached | null> {
  if (!(await store.exists())) return null;
  const loaded = await store.load({ fromLastSnapshot: true });
  if (loaded.header.runId !== runId) return null;
  checkAgentPin(store.location, loaded.header, options.agent);
  const attached = attachTo(loaded, { runId, location: store.location, task: options.task, system: options.system ?? null, model: options.model.name });
  // An ended run is answered from the store: its tools must still be the ones it ran with, as a resume checks.
  if ('result' in attached) checkOrigin(store.location, loaded.header, runOriginOf(options.command ?? API_COMMAND, options.model.name, offeredTools(options)), false);
  return attached;
}

async function checkContinuable(store: RunStore, message: string, maxTurns: number | undefined): Promise<void> {
  checkMessageText(store.location, message);
  const view = foldJournal(store.location, await store.load({ fromLastSnapshot: true }));
  refuseCancelled(store.location, view.state, view.context);
  checkContinue(store.location, message, view.state, snapshotContextOf(view), maxTurns);
}

/** Takes the run's lock; a holder taken over is reported, since it may still be alive. */
async function lockRun(options: RunParts, parts: PartsOfRun): Promise<RunLock> {
  const lock = await options.store.lock(options.takeOver ? { takeOver: true } : undefined);
  if (lock.takenOver) parts.observer({ type: 'lock-taken-over', ...lock.takenOver });
  return lock;
}

/**
 * Makes room for a new run: a finished run is archived; an unfinished one is archived only when
 * the user asked for a fresh start, and refused otherwise. Returns where the old run went.
 */
async function clearFinishedRun(store: RunStore, fresh: boolean): Promise<string | null> {
  if (!(await store.exists())) return null;
  if (!fresh) {
    const view = foldJournal(store.location, await store.load({ fromLastSnapshot: true }));
    if (view.state !== 'done') throw new RunExistsError(store.location, view.state, view.context.turn);
  }
  return store.archive();
}

function pauseLimitOf(options: StartOptions): number {
  const limit = options.maxPausesInARow ?? MAX_PAUSES_IN_A_ROW;
  if (!Number.isSafeInteger(limit) || limit < 0) {
    throw new RangeError(`maxPausesInARow must be a whole number of 0 or more (got ${String(limit)}); nothing was started.`);
  }
  return limit;
}

/** The run's tools, with ask_user when questions are allowed. */
function offeredTools(options: RunParts): readonly ToolDefinition[] {
  return options.allowQuestions ? [...options.tools, askUserTool] : options.tools;
}

function toolNamesOf(options: RunParts): string[] {
  return offeredTools(options).map((tool) => tool.name);
}

/** What the driver needs, but the snapshot policy, which needs the journal's records. */
export type PartsOfRun = Omit<DriverParts, 'snapshots'>;

/** The driver's parts from a run's options: every driver (start, resume, a cancel: cancel-run.ts) is built here. */
export function driverParts(options: RunParts, tracing: RunTracing | null, compaction: PinnedCompaction | null = null, clearing: PinnedClearToolUses | null = null): PartsOfRun {
  // Checked here, before anything is written; the policy itself is made once the records are known.
  snapshotEveryOf(options.snapshotEvery);
  const tools = offeredTools(options);
  const registry = new ToolRegistry(tools);
  const maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
  const client = new ContextCompaction(compaction?.mode === 'client' ? compaction : null, { model: options.model, tools: registry.specs, maxTokens });
  const policy = { requireApproval: options.requireApproval, allowQuestions: options.allowQuestions === true, queuesChildren: options.childRuns !== undefined };
  checkDecisionPolicy(policy, tools);
  const timeout = options.decisionTimeoutMs;
  if (timeout !== undefined && !(Number.isSafeInteger(timeout) && timeout > 0)) {
    throw new RangeError(`decisionTimeoutMs must be a whole number of milliseconds above 0 (got ${String(timeout)}); nothing was started.`);
  }
  const approval = approvalCapability(registry, policy, { onDecision: options.onDecision, wait: options.wait, decisionTimeoutMs: timeout });
  // Before a model call, in this order: a budget reached stops the run before a compaction is asked for.
  const capabilities: readonly Capability[] = [budgetCapability, client, approval];
  return {
    capabilities,
    store: options.store,
    signal: options.signal,
    control: new RunControl(options.store.control),
    model: withContextEdits(options.model, compaction, clearing),
    registry,
    // Nobody reads the labels passed of points made here: not kept (a long run would hold one per record).
    crash: options.crashPoints ?? new CrashPoints(options.crashAfter, crashHandlerOf(options.onCrash), false),
    observer: capabilities.reduce((next, capability) => capability.observe?.(next) ?? next, withTracing(options.observer, tracing)),
    toolTimeoutMs: options.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
    toolConcurrency: toolConcurrencyOf(options.toolConcurrency),
    maxTokens,
    inspect: options.inspect,
    ...(tracing ? { traceCall: (toolUseId: string) => traceOfCall(tracing, toolUseId) } : {}),
    ...(options.childRuns ? { childRuns: options.childRuns } : {}),
  };
}

/** How a run a call makes (a sub-agent's) is traced under the call's execute_tool span, while the call runs. */
function traceOfCall(tracing: RunTracing, toolUseId: string) {
  const parent = tracing.callContext(toolUseId);
  return parent ? { tracer: tracing.usedTracer, content: tracing.exportsContent, parent } : undefined;
}

/** The model as the run asks it: with the server's context edits the run pinned, if any. */
function withContextEdits(model: Model, compaction: PinnedCompaction | null, clearing: PinnedClearToolUses | null): Model {
  const compacting = compaction?.mode === 'server' ? withServerCompaction(model, triggerTokensOf(compaction)) : model;
  return clearing ? withClearToolUses(compacting, clearing) : compacting;
}
