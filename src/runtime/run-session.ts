/**
 * The session of one process driving one run: what the capabilities see of it (core/session.ts)
 * over the journal writer, plus what the runtime's own parts share — running a call and
 * recording outcomes in the ledger.
 */
import { effectiveCall } from '../../machines/agent-loop.logic.ts';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import type { AgentContext, AgentEvent, AgentStateName, PendingCall, TokenUsage, ToolOutcome } from '../../machines/agent-loop.types.ts';
import { withEditNotice } from '../awaits/decision-step.ts';
import { budgetViewOf, priceFor, replyCostUsd } from '../budget/budget.ts';
import { costAt } from '../model/prices.ts';
import { type CallView, isWatched, type RunEvent, type RunObserver } from '../core/run-events.ts';
import type { Capability, RunSession } from '../core/session.ts';
import { RunStoppedError } from '../core/stop-errors.ts';
import { RunControl } from '../control/run-control.ts';
import type { LessonWords } from '../lang/lesson-words.ts';
import type { Model } from '../model/model.ts';
import type { RunStore } from '../store/store.ts';
import { executeCall, LazyAbort, toolContextFor, verifyCall } from '../tools/execute-call.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';
import { readOnlyFor, type ToolContext } from '../tools/tool.ts';
import type { CrashPoints } from './crash-points.ts';
import { type AgentSnapshot, JournalWriter, type SavedRecord } from './journal-writer.ts';
import { recordOutcomes } from './record-outcomes.ts';
import { RunInspection, type RunInspector } from './run-inspection.ts';
import { SnapshotPolicy } from './snapshot-policy.ts';
import type { ReconcileParts } from './reconcile-turn.ts';
import type { TakeUpParts } from './take-up.ts';
import type { Finished } from './tool-scheduler.ts';
import type { DurableView } from '../store/journal/journal-codec.ts';
import type { JournalRecord } from '../store/journal/journal-record.ts';
import type { CallTrace, ChildRuns } from '../tools/calling-run.ts';
import { anyToolCharges, callerFor, turnCharge } from './caller-parts.ts';

export interface DriverParts {
  store: RunStore;
  /** Aborted to stop the run at the next step boundary (everything done so far is saved). */
  signal: AbortSignal | undefined;
  model: Model;
  registry: ToolRegistry;
  crash: CrashPoints;
  observer: RunObserver;
  toolTimeoutMs: number;
  /** How many calls of one reply may run at once (tool-scheduler.ts). */
  toolConcurrency: number;
  maxTokens: number;
  /** What the run says to the model itself (a call's unknown state after a resume), in its language. */
  words: LessonWords;
  inspect: RunInspector | undefined;
  /** Records between two snapshots (snapshot-policy.ts): the session's writer writes them. */
  snapshotEvery: number;
  /** What plugs into the run: approval, compaction, budgets (each a module of its own). */
  capabilities: readonly Capability[];
  /** With a tracer: how a run a call makes is traced under the call's execute_tool span (ToolContext.caller). */
  traceCall?: ((toolUseId: string) => CallTrace | undefined) | undefined;
  /** Where runs made by calls are queued for any worker (a fleet's; ToolContext.caller). */
  childRuns?: ChildRuns | undefined;
  /** Whose the run is (core/tenant.ts): the runs its calls start are the same tenant's (ToolContext.caller). */
  tenant: string;
}

/**
 * Where the journal stands when the process takes the run: `first`, the first record of the load
 * a resume started from (a snapshot, or record 0), or the record that created the run; `last`,
 * the last record written.
 */
export interface JournalEnds {
  first: JournalRecord;
  last: JournalRecord;
}

export class DriverSession implements RunSession {
  readonly writer: JournalWriter;
  readonly inspection: RunInspection;
  /** Cancel and pause asked by other processes through the store's inbox, honoured at each step boundary. */
  readonly control: RunControl;
  private readonly callViews = new WeakMap<PendingCall, CallView>();

  constructor(
    private readonly parts: DriverParts,
    readonly runId: string,
    snapshot: AgentSnapshot,
    durable: DurableView,
    { first, last }: JournalEnds,
  ) {
    this.control = new RunControl(parts.store.control);
    this.inspection = new RunInspection(parts.inspect, runId, `${runId}#${last.seq}`, agentLoopMachine, () => this.writer.snapshot);
    const saved = (record: SavedRecord) => this.reportSaved(record);
    // A turn whose calls spent on the run's behalf (sub-agents) is charged as it closes.
    const closingCharge = anyToolCharges(parts.registry) ? (context: AgentContext) => turnCharge(this.callerParts(), context) : undefined;
    const snapshots = new SnapshotPolicy(parts.snapshotEvery, first, last);
    this.writer = new JournalWriter({ store: parts.store, snapshots, crash: parts.crash, saved, took: (event) => this.inspection.took(event), closingCharge }, snapshot, durable, last.seq + 1);
  }

  get store(): RunStore {
    return this.parts.store;
  }

  get model(): Model {
    return this.parts.model;
  }

  get registry(): ToolRegistry {
    return this.parts.registry;
  }

  get signal(): AbortSignal | undefined {
    return this.parts.signal;
  }

  /** What plugs into the run, in its order. */
  get capabilities(): readonly Capability[] {
    return this.parts.capabilities;
  }

  /** The most tokens the model may write in one reply. */
  get maxTokens(): number {
    return this.parts.maxTokens;
  }

  /** The run's words for what it tells the model itself (an unknown state, a verified call). */
  get words(): LessonWords {
    return this.parts.words;
  }

  /** How many calls of one reply may run at once (tool-scheduler.ts). */
  get toolConcurrency(): number {
    return this.parts.toolConcurrency;
  }

  /** How long one call may run before it becomes an error result. */
  get toolTimeoutMs(): number {
    return this.parts.toolTimeoutMs;
  }

  context(): AgentContext {
    return this.writer.snapshot.context;
  }

  state(): AgentStateName {
    return this.writer.state;
  }

  step(event: AgentEvent) {
    return this.writer.step(event);
  }

  /**
   * Counts a reply's tokens the moment it arrives, in a record of its own written without
   * waiting for the disk (a killed process keeps it; the next checkpoint makes it durable). A
   * crash before checkpoint A then loses the reply, which a resume asks for again, but not what
   * it cost: usage counts both calls.
   */
  async countUsage(usage: TokenUsage, usageNote: string | null, answeredBy?: string): Promise<void> {
    const costUsd = replyCostUsd(this.context(), usage, this.parts.model, answeredBy);
    const event: AgentEvent = costUsd === undefined ? { type: 'MODEL_USAGE', usage } : { type: 'MODEL_USAGE', usage, costUsd };
    // Priced whatever the run's budget: a store may charge the reply to the run's tenant with its record.
    const price = priceFor(this.parts.model, answeredBy);
    const reply = { usage, costUsd: costUsd ?? (price ? costAt(price, usage) : null) };
    await this.writer.step(event, { note: usageNote ? { usage: usageNote } : undefined, sync: false, reply });
  }

  emit(event: RunEvent): void {
    this.parts.observer(event);
  }

  stopIfAsked(): void {
    const signal = this.parts.signal;
    if (!signal?.aborted) return;
    throw signal.reason instanceof Error ? signal.reason : new RunStoppedError(String(signal.reason ?? 'asked to stop'));
  }

  /** One view per call (a call in the context never changes): each record's `saved` event lists the open calls. */
  callView(call: PendingCall): CallView {
    let view = this.callViews.get(call);
    if (!view) {
      const tool = this.parts.registry.get(call.name);
      view = { ...call, readOnly: tool ? readOnlyFor(tool, call.input) : null };
      this.callViews.set(call, view);
    }
    return view;
  }

  /** Runs the call (the tool's effect) with the input a person may have edited, watched for a cancel (a pause waits for it). */
  async runCall(call: PendingCall): Promise<ToolOutcome> {
    const { parts } = this;
    // Awaited only when there is something to wait for (a store that checks its lease; an armed crash point that fired): every call passes here.
    const owning = parts.store.assertOwnership?.();
    if (owning) await owning;
    // The call's view and its two events only for someone who watches the run.
    const view = isWatched(parts.observer) ? this.callView(call) : null;
    const startedAt = Date.now();
    if (view) this.emit({ type: 'tool-started', call: view, at: startedAt });
    const ran = effectiveCall(this.context(), call);
    const caller = callerFor(this.callerParts(), this.context(), call);
    const result = withEditNotice(call, ran, await this.control.watch((stop) => executeCall(parts.registry, this.runId, ran, parts.toolTimeoutMs, this.control.abortable(stop), caller), undefined, 'cancel'));
    if (view) this.emit({ type: 'tool-finished', call: view, outcome: result, ms: Date.now() - startedAt });
    const fired = parts.crash.pass('tool-return');
    if (fired) await fired;
    return result;
  }

  callContext(call: PendingCall): ToolContext {
    return toolContextFor(this.runId, call, new LazyAbort(), callerFor(this.callerParts(), this.context(), call));
  }

  private callerParts() {
    const { store, registry, model, traceCall, childRuns, tenant } = this.parts;
    return { runId: this.runId, tenant, store, registry, model, traceCall, childRuns };
  }

  /** What taking the run up uses of it (take-up.ts). */
  takeUpParts(): TakeUpParts {
    return {
      runId: this.runId,
      modelName: this.parts.model.name,
      location: this.parts.store.location,
      decisions: this.parts.store.decisions,
      writer: this.writer,
      started: () => this.inspection.started(undefined),
      emit: (event) => this.emit(event),
      callView: (call) => this.callView(call),
    };
  }

  /** What the reconcile of an open turn uses of the run (reconcile-turn.ts). */
  reconcileParts(): ReconcileParts {
    const { parts, writer } = this;
    return {
      registry: parts.registry,
      words: parts.words,
      toolConcurrency: parts.toolConcurrency,
      context: () => this.context(),
      durable: () => writer.durable,
      emit: (event) => this.emit(event),
      callView: (call) => this.callView(call),
      runCall: (call) => this.runCall(call),
      verifyCall: (call) => verifyCall(parts.registry, this.runId, call, parts.toolTimeoutMs),
      record: (group, othersRunning) => this.record(group, othersRunning),
      noteReuse: (note) => writer.noteReuse(note),
      closesResumedTurn: () => {
        writer.closingResumedTurn = true;
      },
    };
  }

  /** Records outcomes that finished together (the ledger write: record-outcomes.ts). */
  record(group: readonly Finished[], othersRunning: boolean) {
    return recordOutcomes(this.writer, (call, error) => this.emit({ type: 'ledger-write-failed', call: this.callView(call), error }), group, othersRunning);
  }

  private reportSaved({ record, receipt, point, label, durable, closesResumedTurn }: SavedRecord): void {
    // Several records a turn: the event, its lists of calls and its budget view only when someone takes it.
    if (!isWatched(this.parts.observer)) return;
    const context = this.context();
    this.emit({
      type: 'saved',
      point,
      label,
      seq: record.seq,
      state: record.state,
      event: record.event,
      turn: context.turn,
      maxTurns: context.maxTurns,
      pending: context.pending.map((call) => this.callView(call)),
      recordedIds: context.results.map((o) => o.tool_use_id),
      ledgerEntries: this.writer.durable.ledger.size,
      usage: context.usage, ...budgetViewOf(context),
      bytes: receipt.bytes,
      at: record.at,
      durable,
      closesResumedTurn,
      syncMs: receipt.syncMs ?? null,
    });
  }
}
