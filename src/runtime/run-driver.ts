/**
 * Drives one run: compute the next snapshot with the pure `transition()`, make it durable, and
 * only then carry out the effect it announced (a model call, a tool run, closing the turn),
 * feeding the outcome back as the next event.
 */
import type { SnapshotFrom } from 'xstate';
import type { AnnouncedEffect } from '../../machines/agent-loop.effects.ts';
import { announcedEffectOf, effectOfActions } from '../../machines/agent-loop.effects.ts';
import { addUsage, effectiveCall } from '../../machines/agent-loop.logic.ts';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import type { AgentEvent, AgentStateName, ModelReply, PendingCall, TokenUsage, ToolOutcome } from '../../machines/agent-loop.types.ts';
import { ZERO_USAGE } from '../../machines/agent-loop.types.ts';
import { awaitedCallOf, type DecisionOptions, findDecision, withEditNotice } from '../approval/decision-step.ts';
import { questionOf } from '../approval/ask-user.ts';
import { type BudgetFields, budgetStopOf, budgetViewOf, costAfter, withBudget } from '../budget/budget.ts';
import { type DecisionPolicy, needsDecisionOf } from '../approval/needs-decision.ts';
import { waitingCallsOf } from '../approval/waiting-calls.ts';
import type { Model, StreamDelta } from '../model/model.ts';
import { receiveReply, replyProblem } from '../model/reply-check.ts';
import { reconcileOpenTurn } from './reconcile-turn.ts';
import { RecordEncodeError } from '../store/framing.ts';
import type { DurableView } from '../store/journal-codec.ts';
import type { JournalRecord, ReconcileNote, RecordEvent, RecordNote, ResumeNote } from '../store/journal-record.ts';
import { pointOf } from '../store/record-points.ts';
import type { AppendOptions, AppendReceipt, RecoveredTornTail, RunStore, StoredRecord } from '../store/store.ts';
import { executeCall } from '../tools/execute-call.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';
import { continuedContext } from '../core/continue-run.ts';
import type { CrashPoints } from './crash-points.ts';
import { appendUnit, encodeSteps, type JournalStep } from './journal-unit.ts';
import { transition, withContext } from './machine-step.ts';
import { type LedgerHost, recordOutcomes } from './record-outcomes.ts';
import { RunInspection, type RunInspector } from './run-inspection.ts';
import type { CallView, RunEvent, RunObserver, RunResult, RunStatusName } from '../core/run-events.ts';
import type { OriginCheck } from './run-origin.ts';
import type { SnapshotPolicy } from './snapshot-policy.ts';
import { runOpenCalls, type ToolTurn } from './tool-scheduler.ts';
import { LiveToolUseIds } from './live-tool-use-ids.ts';
import type { RunControl } from '../control/run-control.ts';
import type { ContextCompaction } from '../compaction/context-compaction.ts';
import { RunStoppedError } from '../core/stop-errors.ts';

export { RunStoppedError } from '../core/stop-errors.ts';

export type AgentSnapshot = SnapshotFrom<typeof agentLoopMachine>;

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
  inspect: RunInspector | undefined;
  /** Which calls need a person's decision, and where decisions come from. */
  policy: DecisionPolicy;
  decisions: DecisionOptions;
  /** Which records are written in full (snapshots), and what the process keeps after one. */
  snapshots: SnapshotPolicy;
  control: RunControl; // cancel and pause asked by other processes, honoured at each step boundary
  /** On resume: the run's budget as the one given changes it (null: unchanged; src/budget/). */
  budgetChange?: BudgetFields | null | undefined;
  compaction: ContextCompaction;
}

export class RunDriver {
  private readonly usedIds = new LiveToolUseIds();
  private readonly callViews = new WeakMap<PendingCall, CallView>();
  /** Set on resume into an open turn: its checkpoint B is the one that fills in the turn. */
  private closingResumedTurn = false;
  /** Set on resume until this process writes its first record, which carries it. */
  private pendingResumeNote: ResumeNote | null = null;
  /** Ledger hits a resume reused since the last record; the next record notes them. */
  private pendingReuses: ReconcileNote[] = [];
  private readonly inspection: RunInspection;
  /** Set on resume: tools whose contract changed since the start (their open calls are not run). */
  private changedTools: ReadonlyMap<string, string> = new Map();
  private readonly toolTurn: ToolTurn = {
    context: () => this.snapshot.context,
    run: (call) => this.runCall(call),
    record: (group, othersRunning) => recordOutcomes(this.ledger, group, othersRunning),
    waitFor: (call) => this.step({ type: 'DECISION_NEEDED', tool_use_id: call.id, at: Date.now() }),
    stopAsked: () => this.parts.control.asked(),
  };
  private readonly ledger: LedgerHost = {
    snapshot: () => this.snapshot,
    advance: (snapshot) => void (this.snapshot = snapshot),
    persist: (steps, options) => this.persistSteps(steps, options),
    took: (event) => this.inspection.took(event),
    writeFailed: (call, error) => this.emit({ type: 'ledger-write-failed', call: this.callView(call), error }),
    closeTurn: () => this.step({ type: 'CLOSE_TURN' }),
  };

  constructor(
    private readonly parts: DriverParts,
    readonly runId: string,
    private snapshot: AgentSnapshot,
    private durable: DurableView,
    private seq: number,
  ) {
    this.inspection = new RunInspection(parts.inspect, runId, `${runId}#${seq - 1}`, agentLoopMachine, () => this.snapshot);
  }

  get state(): AgentStateName {
    return this.snapshot.value as AgentStateName;
  }

  /** Reports the record that created the run (it was written by the store's create()). */
  async announceCreated(record: JournalRecord, receipt: AppendReceipt): Promise<void> {
    await this.reportSaved(record, receipt);
    const { task, system, maxTurns, maxPausesInARow } = this.snapshot.context;
    this.inspection.started({ task, system, maxTurns, maxPausesInARow });
  }

  /** Runs effects until the machine rests in a final state. */
  async drive(first: AnnouncedEffect | null): Promise<RunResult> {
    let effect = first;
    while (effect) {
      this.stopIfAsked();
      const cancel = await this.parts.control.atBoundary();
      if (cancel) effect = await this.step(cancel); // to the final state cancelled: the loop ends
      else switch (effect) {
        case 'requestModelReply':
          effect = budgetStopOf(this.snapshot.context) ? await this.step({ type: 'BUDGET_REACHED' }) : await (this.parts.compaction.stepIfDue(this.snapshot.context, this.parts.registry.specs, (e) => this.step(e)) ?? this.askModel());
          break;
        case 'runPendingTools':
          effect = await runOpenCalls(this.parts, this.toolTurn);
          break;
        case 'awaitDecision':
          effect = await this.takeDecision();
          break;
        case 'requestTurnClose':
          effect = await this.step({ type: 'CLOSE_TURN' });
          break;
        case 'requestCompaction':
          effect = await this.parts.compaction.compact({ context: () => this.snapshot.context, step: (e) => this.step(e), countUsage: (u, n) => this.countUsage(u, n) });
          break;
      }
    }
    if (this.snapshot.status !== 'done' && this.state !== 'awaitingDecision') {
      throw new Error(`the machine rests in ${this.state} without announcing an effect`);
    }
    return this.finish();
  }

  /**
   * Picks a loaded run up where it stopped: settles the calls of an open turn, reopens a run
   * stopped at MAX_TURNS (given more turns) or failed for a reason worth retrying, and goes on.
   * With `message` (checked by checkContinue), a done run takes it as the user's next message.
   */
  async resume(maxTurns: number | undefined, tornTail: RecoveredTornTail | null, lastStored: StoredRecord, origin: OriginCheck, message?: string): Promise<RunResult> {
    const context = this.snapshot.context;
    this.inspection.started(undefined);
    this.changedTools = origin.changedTools;
    this.pendingResumeNote = {
      pid: process.pid,
      fromSeq: this.seq - 1,
      cutEnd: tornTail && { offset: tornTail.offset, bytes: tornTail.bytes, lostCommittedRecord: tornTail.lostCommittedRecord },
    };
    this.emit({
      type: 'resumed',
      runId: this.runId,
      state: this.state,
      turn: context.turn,
      maxTurns: context.maxTurns,
      pending: context.pending.map((call) => this.callView(call)),
      model: this.parts.model.name,
      location: this.parts.store.location,
      tornTail,
      task: context.task,
      usage: context.usage,
      ledgerEntries: this.durable.ledger.size,
      lastSave: { seq: lastStored.record.seq, point: pointOf(lastStored.record), at: lastStored.record.at, bytes: lastStored.bytes },
      startedBy: origin.startedBy,
      acceptedChanges: origin.acceptedChanges,
    });
    if (message !== undefined) {
      await this.reopen('awaitingModel', maxTurns ?? context.maxTurns, message);
    } else if (this.snapshot.status === 'done') {
      if (!this.mayReopen(maxTurns)) return this.finish();
      await this.reopen('awaitingModel', maxTurns ?? context.maxTurns);
    } else if ((maxTurns !== undefined && maxTurns !== context.maxTurns) || this.parts.budgetChange) {
      await this.reopen(this.state, maxTurns ?? context.maxTurns);
    }
    if (this.state === 'pendingTool' || this.state === 'effectRecorded') await this.reconcileOpenTurn();
    return this.drive(announcedEffectOf(this.state, this.snapshot.context));
  }

  private finish(): RunResult {
    const result = this.result();
    this.emit({ type: 'finished', result });
    return result;
  }

  result(): RunResult {
    const context = this.snapshot.context;
    const waiting = this.state === 'awaitingDecision';
    return {
      runId: this.runId,
      status: (waiting ? 'waiting' : this.state) as RunStatusName,
      ...(waiting ? { waiting: waitingCallsOf(this.runId, context) } : {}),
      text: context.finalText,
      failure: context.failure,
      turn: context.turn,
      maxTurns: context.maxTurns,
      usage: context.usage, ...budgetViewOf(context),
      ...(context.cancellation ? { cancellation: context.cancellation } : {}),
    };
  }

  private mayReopen(maxTurns: number | undefined): boolean {
    const context = this.snapshot.context;
    if (this.state === 'stoppedAtMaxTurns') return maxTurns !== undefined && maxTurns > context.turn;
    if (this.state === 'stoppedAtBudget') return Boolean(this.parts.budgetChange);
    if (this.state === 'failed') return context.failure?.retryable === true;
    return false;
  }

  /** With `message`: the user's next message, durable in this record before the model is asked. */
  private async reopen(state: AgentStateName, maxTurns: number, message?: string): Promise<void> {
    const previousState = this.state;
    const { turn } = this.snapshot.context;
    // A finished run that is reopened starts a new series of pauses (it may have failed on too many).
    const pausesInARow = this.snapshot.status === 'done' ? 0 : this.snapshot.context.pausesInARow;
    const context = withBudget(message === undefined ? { ...this.snapshot.context, maxTurns, failure: null, pausesInARow } : continuedContext(this.snapshot.context, message, maxTurns), this.parts.budgetChange ?? null);
    this.snapshot = agentLoopMachine.resolveState({ value: state, context });
    await this.persist('REOPEN', { reopened: { maxTurns, previousState }, ...(message === undefined ? {} : { continued: { turn } }) });
    this.inspection.took({ type: 'REOPEN', maxTurns, previousState, ...(message === undefined ? {} : { message }) });
    this.emit({ type: 'reopened', previousState, maxTurns, ...(message === undefined ? {} : { message }) });
  }

  private async reconcileOpenTurn(): Promise<void> {
    const { registry, toolTimeoutMs, toolConcurrency } = this.parts;
    this.closingResumedTurn = true;
    await reconcileOpenTurn({
      runId: this.runId,
      registry,
      toolTimeoutMs,
      toolConcurrency,
      ledger: this.durable.ledger,
      changedTools: this.changedTools,
      context: () => this.snapshot.context,
      record: (group, othersRunning) => recordOutcomes(this.ledger, group, othersRunning),
      run: (call) => this.runCall(call),
      noteReuse: (note) => void this.pendingReuses.push(note),
      report: (call, decision, detail, { rule, basis }) => this.emit({ type: 'reconciled', call: this.callView(call), decision, detail, rule, basis }),
    });
  }

  private async askModel(): Promise<AnnouncedEffect | null> {
    const context = this.snapshot.context;
    let reply: ModelReply;
    if (context.heldReply && this.state === 'awaitingModel') {
      // The reply that met MAX_TURNS, reopened with more turns: act on it (its tokens were counted).
      reply = { ...context.heldReply, usage: ZERO_USAGE };
    } else {
      const { model, maxTokens } = this.parts;
      const { system, messages } = context;
      this.emit({ type: 'model-call', turn: context.turn, model: model.name, provider: model.provider ?? null, maxTokens, system, messages });
      const onStream = (delta: StreamDelta) => this.emit({ type: 'model-stream', delta });
      const received = receiveReply(await model.createMessage({ system, messages, tools: this.parts.registry.specs, maxTokens, onStream, earlierReplies: context.compacted?.replies }));
      const { reply: answer, usage, usageNote } = received;
      this.emit({ type: 'model-reply', stopReason: answer.stop_reason, usage, usageNote, reply: answer });
      await this.countUsage(received.usage, received.usageNote, answer.model);
      reply = received.reply;
    }
    const problem = replyProblem(reply, this.usedIds.of(context));
    if (problem) return this.step({ type: 'MODEL_REPLY_INVALID', reason: problem, usage: ZERO_USAGE });
    let effect: AnnouncedEffect | null;
    try {
      effect = await this.step({ type: 'MODEL_REPLY', reply, needsDecision: needsDecisionOf(reply, this.parts.registry, this.parts.policy) });
    } catch (error) {
      // A reply from a user's own Model may hold what JSON cannot (a BigInt): refused like any bad reply.
      if (!(error instanceof RecordEncodeError)) throw error;
      return this.step({ type: 'MODEL_REPLY_INVALID', reason: `the reply holds a value the journal cannot record (${error.problem})`, usage: ZERO_USAGE });
    }
    this.usedIds.add(reply);
    return effect;
  }

  /**
   * Counts a reply's tokens the moment it arrives, in a record of its own written without
   * waiting for the disk (a killed process keeps it; the next checkpoint makes it durable). A
   * crash before checkpoint A then loses the reply, which a resume asks for again, but not what
   * it cost: usage counts both calls.
   */
  private async countUsage(usage: TokenUsage, usageNote: string | null, answeredBy?: string): Promise<void> {
    const context = this.snapshot.context;
    this.snapshot = withContext(this.snapshot, { ...context, usage: addUsage(context.usage, usage), ...costAfter(context, usage, this.parts.model, answeredBy) });
    await this.persist('MODEL_USAGE', usageNote ? { usage: usageNote } : undefined, { sync: false });
    this.inspection.took({ type: 'MODEL_USAGE', usage });
  }

  private async runCall(call: PendingCall): Promise<ToolOutcome> {
    await this.parts.store.assertOwnership?.();
    const view = this.callView(call);
    const startedAt = Date.now();
    this.emit({ type: 'tool-started', call: view, at: startedAt });
    const ran = effectiveCall(this.snapshot.context, call);
    const result = withEditNotice(call, ran, await this.parts.control.watch((stop) => executeCall(this.parts.registry, this.runId, ran, this.parts.toolTimeoutMs, this.parts.control.abortable(stop))));
    this.emit({ type: 'tool-finished', call: view, outcome: result, ms: Date.now() - startedAt });
    await this.parts.crash.pass('tool-return');
    return result;
  }

  /**
   * Waits for the decision about the awaited call and records it; the inbox entry it came from
   * is settled only once the record is durable. Null: no decision, and the run is not to wait.
   */
  private async takeDecision(): Promise<AnnouncedEffect | null> {
    const { parts } = this;
    const context = this.snapshot.context;
    const call = awaitedCallOf(context);
    const question = call.needs === 'answer' ? questionOf(call.input) : null;
    const onWait = () => this.emit({ type: 'waiting', call: this.callView(call), needs: call.needs!, since: context.awaiting!.since, question });
    const wait = { runId: this.runId, context, inbox: parts.store.decisions, registry: parts.registry, options: parts.decisions, onWait };
    const decision = await parts.control.watch((signal) => findDecision({ ...wait, signal }), parts.signal);
    if (!decision) {
      this.stopIfAsked();
      return parts.control.requested ? 'awaitDecision' : null;
    }
    const effect = await this.step({ type: 'DECISION', decision });
    await parts.store.decisions?.settle(decision.tool_use_id);
    this.emit({ type: 'decided', call: this.callView(call), decision });
    return effect;
  }

  private async step(event: AgentEvent): Promise<AnnouncedEffect | null> {
    const [next, actions] = transition(agentLoopMachine, this.snapshot, event);
    if (next === this.snapshot) throw new Error(`the machine did not take ${event.type} in ${this.state}`);
    const before = this.snapshot;
    this.snapshot = next;
    try {
      // An event that carries its own time (DECISION_NEEDED: waits since) is recorded at that time.
      await this.persist(event.type, undefined, undefined, 'at' in event ? event.at : Date.now());
    } catch (error) {
      // Nothing of an unencodable record was written: the run stands where it was.
      if (error instanceof RecordEncodeError) this.snapshot = before;
      throw error;
    }
    this.inspection.took(event);
    return effectOfActions(actions);
  }

  /** Appends the transition to the journal; resolves once it is durable. */
  private persist(event: RecordEvent, note?: RecordNote, options?: AppendOptions, at = Date.now()): Promise<void> {
    return this.persistSteps([{ snapshot: this.snapshot, event, note, at }], options);
  }

  /** Appends transitions as one unit (journal-unit.ts), each its own record; resolves once they are durable. */
  private async persistSteps(steps: readonly JournalStep[], options?: AppendOptions): Promise<void> {
    const resumed = this.pendingResumeNote;
    const reused = this.pendingReuses.length ? this.pendingReuses : null;
    const first = steps[0]!;
    const noted = resumed || reused ? [{ ...first, note: { ...first.note, ...(resumed ? { resumed } : {}), ...(reused ? { reused } : {}) } }, ...steps.slice(1)] : steps;
    const records = encodeSteps(this.parts.snapshots, this.durable, this.seq, noted, options);
    const receipts = await appendUnit(this.parts.store, records, options);
    this.pendingResumeNote = null;
    if (reused) this.pendingReuses = [];
    for (let index = 0; index < records.length; index++) {
      const record = records[index]!;
      const { snapshot } = steps[index]!;
      if (records.length > 1) this.snapshot = snapshot; // each record of a unit is reported with its own state
      this.durable = this.parts.snapshots.durableAfter(record, this.durable, snapshot.value as AgentStateName, snapshot.context);
      this.seq += 1;
      const fired = this.reportSaved(record, receipts[index]!, options?.sync !== false);
      if (fired) await fired;
    }
  }

  /** A promise only when an armed crash point fired with one (a record is reported several times a turn: no await otherwise). */
  private reportSaved(record: JournalRecord, receipt: AppendReceipt, durable = true): Promise<void> | undefined {
    const point = pointOf(record);
    const label = this.parts.crash.reach(point);
    const context = this.snapshot.context;
    const closesResumedTurn = point === 'save-b' && this.closingResumedTurn;
    if (point === 'save-b') this.closingResumedTurn = false;
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
      ledgerEntries: this.durable.ledger.size,
      usage: context.usage, ...budgetViewOf(context),
      bytes: receipt.bytes,
      at: record.at,
      durable,
      closesResumedTurn,
      syncMs: receipt.syncMs ?? null,
    });
    return this.parts.crash.fireIfArmed(label);
  }

  private stopIfAsked(): void {
    const signal = this.parts.signal;
    if (!signal?.aborted) return;
    throw signal.reason instanceof Error ? signal.reason : new RunStoppedError(String(signal.reason ?? 'asked to stop'));
  }

  /** One view per call (a call in the context never changes): each record's `saved` event lists the open calls. */
  private callView(call: PendingCall): CallView {
    let view = this.callViews.get(call);
    if (!view) {
      const tool = this.parts.registry.get(call.name);
      view = { ...call, readOnly: tool ? tool.readOnly : null };
      this.callViews.set(call, view);
    }
    return view;
  }

  private emit(event: RunEvent): void {
    this.parts.observer(event);
  }
}
