/**
 * The run's one writer of its journal: it holds the current snapshot, the next seq and the
 * durable view (what a resume would read), steps the machine with the pure `transition()`, and
 * makes each step durable before the effect it announces is carried out. Each record written is
 * reported (the `saved` event) and passes its crash point.
 */
import type { AnyEventObject, SnapshotFrom } from 'xstate';
import type { AnnouncedEffect } from '../../machines/agent-loop.effects.ts';
import { effectOfActions } from '../../machines/agent-loop.effects.ts';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import type { AgentEvent, AgentStateName, TokenUsage } from '../../machines/agent-loop.types.ts';
import { RecordEncodeError } from '../store/journal/framing.ts';
import type { DurableView } from '../store/journal/journal-codec.ts';
import type { JournalRecord, ReconcileNote, RecordEvent, RecordNote, ResumeNote } from '../store/journal/journal-record.ts';
import { type PointName, pointOf } from '../store/journal/record-points.ts';
import type { AppendOptions, AppendReceipt, ReplyCharge, RunStore } from '../store/store.ts';
import type { CrashPoints } from './crash-points.ts';
import { appendUnit, encodeSteps, type JournalStep } from './journal-unit.ts';
import { transition, withStatusOfState } from './machine-step.ts';
import type { SnapshotPolicy } from './snapshot-policy.ts';

export type AgentSnapshot = SnapshotFrom<typeof agentLoopMachine>;

/** A record as it was written, for the `saved` event. */
export interface SavedRecord {
  record: JournalRecord;
  receipt: AppendReceipt;
  point: PointName;
  label: string;
  /** False for a record written without waiting for the disk (a reply's usage). */
  durable: boolean;
  /** The checkpoint B that fills in a turn a resume found open. */
  closesResumedTurn: boolean;
}

export interface WriterParts {
  store: RunStore;
  snapshots: SnapshotPolicy;
  crash: CrashPoints;
  /** Each record written, once durable (or written, without a sync). */
  saved(saved: SavedRecord): void;
  /** Each event taken, once its record is written (the XState inspection). */
  took(event: AnyEventObject): void;
  /**
   * Asked before a turn closes: what its calls spent on the run's behalf (a sub-agent's child
   * run), counted by a MODEL_USAGE record written in one unit with the close (calling-run.ts).
   */
  closingCharge?: ((context: AgentSnapshot['context']) => Promise<{ usage: TokenUsage; costUsd?: number; calls: string[] } | null>) | undefined;
}

/** How a step's record is written: the note it carries, and whether it waits for the disk (default: it does). */
export interface StepOptions {
  note?: RecordNote | undefined;
  sync?: boolean | undefined;
  /** The reply whose usage the record counts (MODEL_USAGE as a reply arrives): a store may charge it with the record. */
  reply?: ReplyCharge | undefined;
}

export class JournalWriter {
  /** Set on resume into an open turn: its checkpoint B is the one that fills in the turn. */
  closingResumedTurn = false;
  /** Set on resume until this process writes its first record, which carries it. */
  private resumeNote: ResumeNote | null = null;
  /** Ledger hits a resume reused since the last record; the next record notes them. */
  private reuses: ReconcileNote[] = [];

  constructor(
    private readonly parts: WriterParts,
    public snapshot: AgentSnapshot,
    private durableView: DurableView,
    private seq: number,
  ) {}

  get state(): AgentStateName {
    return this.snapshot.value as AgentStateName;
  }

  /** What a resume would read now. */
  get durable(): DurableView {
    return this.durableView;
  }

  /** The seq of the last record written. */
  get lastSeq(): number {
    return this.seq - 1;
  }

  noteResume(note: ResumeNote): void {
    this.resumeNote = note;
  }

  noteReuse(note: ReconcileNote): void {
    this.reuses.push(note);
  }

  /** Tells the inspection an event was taken (for records not made by step()). */
  took(event: AnyEventObject): void {
    this.parts.took(event);
  }

  /**
   * Takes the event and makes its record durable (or, with `sync: false`, written); resolves with
   * the effect the transition announced. `note` is what the record says beyond its snapshot.
   */
  async step(event: AgentEvent, options?: StepOptions): Promise<AnnouncedEffect | null> {
    const note = options?.note;
    const sync = options?.sync;
    const reply = options?.reply;
    if (event.type === 'CLOSE_TURN' && this.parts.closingCharge) {
      const charge = await this.parts.closingCharge(this.snapshot.context);
      if (charge) return this.closeCharged(event, charge);
    }
    const [taken, actions] = transition(agentLoopMachine, this.snapshot, event);
    // xstate keeps `done` on a snapshot that leaves a final state (REOPEN does): the status is its state's.
    const next = withStatusOfState(agentLoopMachine, taken);
    if (next === this.snapshot) throw new Error(`the machine did not take ${event.type} in ${this.state}`);
    const before = this.snapshot;
    this.snapshot = next;
    try {
      // An event that carries its own time (DECISION_NEEDED: waits since) is recorded at that time.
      const appendOptions = sync === false || reply ? { ...(sync === false ? { sync } : {}), ...(reply ? { reply } : {}) } : undefined;
      // persist()'s work written out here: an async frame and an await less, four times a turn.
      const written: JournalStep = { snapshot: next, event: event.type, note, at: 'at' in event ? event.at : Date.now() };
      const reused = this.reuses.length > 0;
      const [record] = this.encodeUnit([written], appendOptions);
      const receipt = await this.parts.store.append(record!, appendOptions);
      this.appended(reused);
      const fired = this.recorded(record!, receipt, written.snapshot, appendOptions);
      if (fired) await fired;
    } catch (error) {
      // Nothing of an unencodable record was written: the run stands where it was.
      if (error instanceof RecordEncodeError) this.snapshot = before;
      throw error;
    }
    this.parts.took(event);
    return effectOfActions(actions);
  }

  /**
   * The turn's close and the charge of what its calls spent, as one unit (one fsync): a resume
   * finds both or neither, so the charge is counted exactly once.
   */
  private async closeCharged(event: AgentEvent, charge: { usage: TokenUsage; costUsd?: number; calls: string[] }): Promise<AnnouncedEffect | null> {
    const [closed, actions] = transition(agentLoopMachine, this.snapshot, event);
    if (closed === this.snapshot) throw new Error(`the machine did not take ${event.type} in ${this.state}`);
    const usageEvent: AgentEvent = { type: 'MODEL_USAGE', usage: charge.usage, ...(charge.costUsd !== undefined ? { costUsd: charge.costUsd } : {}) };
    const [counted] = transition(agentLoopMachine, closed, usageEvent);
    const at = Date.now();
    await this.persistSteps([
      { snapshot: closed, event: event.type, note: undefined, at },
      { snapshot: counted, event: 'MODEL_USAGE', note: { charged: { calls: charge.calls } }, at },
    ]);
    this.snapshot = counted;
    this.parts.took(event);
    this.parts.took(usageEvent);
    return effectOfActions(actions);
  }

  /** Appends the current snapshot as one record; resolves once it is durable. */
  persist(event: RecordEvent, note?: RecordNote, options?: AppendOptions, at = Date.now()): Promise<void> {
    return this.persistSteps([{ snapshot: this.snapshot, event, note, at }], options);
  }

  /** Appends transitions as one unit (journal-unit.ts), each its own record; resolves once they are durable. */
  async persistSteps(steps: readonly JournalStep[], options?: AppendOptions): Promise<void> {
    const reused = this.reuses.length > 0;
    const records = this.encodeUnit(steps, options);
    // One record (most of them): appended here, without appendUnit's async frame and await.
    const receipts = records.length === 1 ? [await this.parts.store.append(records[0]!, options)] : await appendUnit(this.parts.store, records, options);
    this.appended(reused);
    for (let index = 0; index < records.length; index++) {
      const { snapshot } = steps[index]!;
      if (records.length > 1) this.snapshot = snapshot; // each record of a unit is reported with its own state
      const fired = this.recorded(records[index]!, receipts[index]!, snapshot, options);
      if (fired) await fired;
    }
  }

  /** The records of a unit, the first carrying what a resume noted since the last record. */
  private encodeUnit(steps: readonly JournalStep[], options: AppendOptions | undefined): JournalRecord[] {
    // A record encoded against a view without its messages would cut the conversation short.
    if (this.durableView.fromFinalRecord) throw new Error('a run loaded from its final record alone was about to be written to; it must be loaded whole first');
    const resumed = this.resumeNote;
    const reused = this.reuses.length ? this.reuses : null;
    const first = steps[0]!;
    const noted = resumed || reused ? [{ ...first, note: { ...first.note, ...(resumed ? { resumed } : {}), ...(reused ? { reused } : {}) } }, ...steps.slice(1)] : steps;
    return encodeSteps(this.parts.snapshots, this.durableView, this.seq, noted, options);
  }

  /** A unit was appended: what the resume noted (and the reuses, when it carried them) is written. */
  private appended(reused: boolean): void {
    this.resumeNote = null;
    if (reused) this.reuses = [];
  }

  /** One record of a unit is written: the durable view and the seq move past it, and it is reported. */
  private recorded(record: JournalRecord, receipt: AppendReceipt, snapshot: AgentSnapshot, options: AppendOptions | undefined): Promise<void> | undefined {
    this.durableView = this.parts.snapshots.durableAfter(record, this.durableView, snapshot.value as AgentStateName, snapshot.context);
    this.seq += 1;
    return this.report(record, receipt, options?.sync !== false);
  }

  /** Reports a record; a promise only when an armed crash point fired with one (no await otherwise: a record is reported several times a turn). */
  report(record: JournalRecord, receipt: AppendReceipt, durable = true): Promise<void> | undefined {
    const point = pointOf(record);
    const label = this.parts.crash.reach(point);
    const closesResumedTurn = point === 'save-b' && this.closingResumedTurn;
    if (point === 'save-b') this.closingResumedTurn = false;
    this.parts.saved({ record, receipt, point, label, durable, closesResumedTurn });
    return this.parts.crash.fireIfArmed(label);
  }
}
