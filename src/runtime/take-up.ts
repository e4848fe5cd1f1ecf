/**
 * A process takes up a run it loaded: it says so (the `resumed` event, and the note its first
 * record carries), reopens a run that may go on (stopped at MAX_TURNS and given more turns, stopped
 * at a budget that was raised, failed for a reason worth retrying, or done and given the user's
 * next message), and settles the inbox entries of decisions its journal holds already. The
 * driver then settles the calls of a turn it finds open by the reconcile rules (reconcile-turn.ts)
 * and goes on with the effect the snapshot announces.
 */
import type { AgentEvent, BudgetChange, PendingCall } from '../../machines/agent-loop.types.ts';
import type { CallView, RunEvent } from '../core/run-events.ts';
import { pointOf } from '../store/journal/record-points.ts';
import type { DecisionInbox, RecoveredTornTail, StoredRecord } from '../store/store.ts';
import type { JournalWriter } from './journal-writer.ts';
import type { OriginCheck } from './run-origin.ts';

/** What taking a run up uses of it: its journal writer, where it is kept, and how it reports. */
export interface TakeUpParts {
  readonly runId: string;
  /** The model's name and the store's location, as the `resumed` event tells them. */
  readonly modelName: string;
  readonly location: string;
  /** Where decisions about waiting calls arrive, if the store has such an inbox. */
  readonly decisions: DecisionInbox | undefined;
  readonly writer: Pick<JournalWriter, 'snapshot' | 'state' | 'durable' | 'lastSeq' | 'noteResume' | 'step'>;
  /** Tells the run's inspector that a process took the run up. */
  started(): void;
  emit(event: RunEvent): void;
  callView(call: PendingCall): CallView;
}

export interface TakeUp {
  /** A new MAX_TURNS, if given. */
  maxTurns: number | undefined;
  tornTail: RecoveredTornTail | null;
  lastStored: StoredRecord;
  origin: OriginCheck;
  /** The user's next message for a done conversation (checked by checkContinue). */
  message?: string | undefined;
  /** The run's budget as the one given changes it (null: unchanged; src/budget/). */
  budgetChange: BudgetChange | null;
}

export async function takeUp(parts: TakeUpParts, { maxTurns, tornTail, lastStored, origin, message, budgetChange }: TakeUp): Promise<void> {
  const { writer } = parts;
  const context = writer.snapshot.context;
  parts.started();
  writer.noteResume({
    pid: process.pid,
    fromSeq: writer.lastSeq,
    cutEnd: tornTail && { offset: tornTail.offset, bytes: tornTail.bytes, lostCommittedRecord: tornTail.lostCommittedRecord },
  });
  parts.emit({
    type: 'resumed',
    runId: parts.runId,
    state: writer.state,
    turn: context.turn,
    maxTurns: context.maxTurns,
    pending: context.pending.map((call) => parts.callView(call)),
    model: parts.modelName,
    location: parts.location,
    tornTail,
    task: context.task,
    usage: context.usage,
    ledgerEntries: writer.durable.fromFinalRecord?.ledgerEntries ?? writer.durable.ledger.size,
    lastSave: { seq: lastStored.record.seq, point: pointOf(lastStored.record), at: lastStored.record.at, bytes: lastStored.bytes },
    startedBy: origin.startedBy,
    acceptedChanges: origin.acceptedChanges,
  });
  await settleRecordedDecisions(parts);
  await reopen(parts, { maxTurns: maxTurns ?? context.maxTurns, message, budget: budgetChange });
}

/**
 * A writer killed between a DECISION record and the settle of its inbox entry left the entry
 * behind: the journal holds the decision, so the entry is settled now (it is only the way the
 * decision came; a call is decided once whatever the inbox says).
 */
async function settleRecordedDecisions(parts: TakeUpParts): Promise<void> {
  const inbox = parts.decisions;
  const { decisions } = parts.writer.snapshot.context;
  if (!inbox || decisions.length === 0) return;
  for (const entry of await inbox.read()) {
    if (decisions.some((decision) => decision.tool_use_id === entry.tool_use_id)) await inbox.settle(entry.tool_use_id);
  }
}

/** The REOPEN event of what a process brings: the machine decides whether it reopens the run or changes its settings. */
export function reopenEventOf({ maxTurns, message, budget }: { maxTurns: number; message: string | undefined; budget: BudgetChange | null }): AgentEvent {
  return { type: 'REOPEN', maxTurns, ...(budget ? { budget } : {}), ...(message === undefined ? {} : { message }) };
}

/**
 * The machine decides whether what this process brings reopens the run (a final state that
 * lacked it) or changes its settings (a live one): where it takes REOPEN, the record is durable
 * before anything else happens, with a message in it before the model is asked.
 */
async function reopen(parts: TakeUpParts, { maxTurns, message, budget }: { maxTurns: number; message: string | undefined; budget: BudgetChange | null }): Promise<void> {
  const { writer } = parts;
  const previousState = writer.state;
  const event = reopenEventOf({ maxTurns, message, budget });
  if (!writer.snapshot.can(event)) return;
  const turn = writer.snapshot.context.turn;
  const continued = message === undefined ? {} : { continued: { turn } };
  await writer.step(event, { note: { reopened: { maxTurns, previousState }, ...continued } });
  parts.emit({ type: 'reopened', previousState, maxTurns, ...(message === undefined ? {} : { message }) });
}
