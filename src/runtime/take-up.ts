/**
 * A process takes up a run it loaded: it says so (the `resumed` event, and the note its first
 * record carries), reopens a run that may go on (stopped at MAX_TURNS and given more turns, stopped
 * at a budget that was raised, failed for a reason worth retrying, or done and given the user's
 * next message), settles the inbox entries of decisions its journal holds already, and settles
 * the calls of a turn it finds open by the reconcile rules. The
 * driver then goes on with the effect the snapshot announces.
 */
import type { AgentEvent, BudgetChange } from '../../machines/agent-loop.types.ts';
import { pointOf } from '../store/journal/record-points.ts';
import type { RecoveredTornTail, StoredRecord } from '../store/store.ts';
import { reconcileOpenTurn } from './reconcile-turn.ts';
import type { OriginCheck } from './run-origin.ts';
import type { DriverSession } from './run-session.ts';

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

export async function takeUp(session: DriverSession, { maxTurns, tornTail, lastStored, origin, message, budgetChange }: TakeUp): Promise<void> {
  const { writer } = session;
  const context = session.context();
  session.inspection.started(undefined);
  writer.noteResume({
    pid: process.pid,
    fromSeq: writer.lastSeq,
    cutEnd: tornTail && { offset: tornTail.offset, bytes: tornTail.bytes, lostCommittedRecord: tornTail.lostCommittedRecord },
  });
  session.emit({
    type: 'resumed',
    runId: session.runId,
    state: session.state(),
    turn: context.turn,
    maxTurns: context.maxTurns,
    pending: context.pending.map((call) => session.callView(call)),
    model: session.model.name,
    location: session.store.location,
    tornTail,
    task: context.task,
    usage: context.usage,
    ledgerEntries: writer.durable.ledger.size,
    lastSave: { seq: lastStored.record.seq, point: pointOf(lastStored.record), at: lastStored.record.at, bytes: lastStored.bytes },
    startedBy: origin.startedBy,
    acceptedChanges: origin.acceptedChanges,
  });
  await settleRecordedDecisions(session);
  await reopen(session, { maxTurns: maxTurns ?? context.maxTurns, message, budget: budgetChange });
  const state = session.state();
  if (state === 'pendingTool' || state === 'effectRecorded') await reconcileOpenTurn(session, origin.changedTools);
}

/**
 * A writer killed between a DECISION record and the settle of its inbox entry left the entry
 * behind: the journal holds the decision, so the entry is settled now (it is only the way the
 * decision came; a call is decided once whatever the inbox says).
 */
async function settleRecordedDecisions(session: DriverSession): Promise<void> {
  const inbox = session.store.decisions;
  const { decisions } = session.context();
  if (!inbox || decisions.length === 0) return;
  for (const entry of await inbox.read()) {
    if (decisions.some((decision) => decision.tool_use_id === entry.tool_use_id)) await inbox.settle(entry.tool_use_id);
  }
}

/**
 * The machine decides whether what this process brings reopens the run (a final state that
 * lacked it) or changes its settings (a live one): where it takes REOPEN, the record is durable
 * before anything else happens, with a message in it before the model is asked.
 */
async function reopen(session: DriverSession, { maxTurns, message, budget }: { maxTurns: number; message: string | undefined; budget: BudgetChange | null }): Promise<void> {
  const { writer } = session;
  const previousState = session.state();
  const event: AgentEvent = { type: 'REOPEN', maxTurns, ...(budget ? { budget } : {}), ...(message === undefined ? {} : { message }) };
  if (!writer.snapshot.can(event)) return;
  const turn = session.context().turn;
  const continued = message === undefined ? {} : { continued: { turn } };
  await writer.step(event, { note: { reopened: { maxTurns, previousState }, ...continued } });
  session.emit({ type: 'reopened', previousState, maxTurns, ...(message === undefined ? {} : { message }) });
}
