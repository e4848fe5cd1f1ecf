/**
 * A process takes up a run it loaded: it says so (the `resumed` event, and the note its first
 * record carries), reopens a run that may go on (stopped at MAX_TURNS and given more turns, stopped
 * at a budget that was raised, failed for a reason worth retrying, or done and given the user's
 * next message), and settles the calls of a turn it finds open by the reconcile rules. The
 * driver then goes on with the effect the snapshot announces.
 */
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import type { AgentStateName } from '../../machines/agent-loop.types.ts';
import { withBudget } from '../budget/budget.ts';
import { continuedContext } from '../core/continue-run.ts';
import { pointOf } from '../store/record-points.ts';
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
}

export async function takeUp(session: DriverSession, { maxTurns, tornTail, lastStored, origin, message }: TakeUp): Promise<void> {
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
  if (message !== undefined) {
    await reopen(session, 'awaitingModel', maxTurns ?? context.maxTurns, message);
  } else if (writer.snapshot.status === 'done') {
    if (mayReopen(session, maxTurns)) await reopen(session, 'awaitingModel', maxTurns ?? context.maxTurns);
  } else if ((maxTurns !== undefined && maxTurns !== context.maxTurns) || session.parts.budgetChange) {
    await reopen(session, session.state(), maxTurns ?? context.maxTurns);
  }
  const state = session.state();
  if (state === 'pendingTool' || state === 'effectRecorded') await reconcileOpenTurn(session, origin.changedTools);
}

function mayReopen(session: DriverSession, maxTurns: number | undefined): boolean {
  const context = session.context();
  switch (session.state()) {
    case 'stoppedAtMaxTurns':
      return maxTurns !== undefined && maxTurns > context.turn;
    case 'stoppedAtBudget':
      return Boolean(session.parts.budgetChange);
    case 'failed':
      return context.failure?.retryable === true;
    default:
      return false;
  }
}

/** With `message`: the user's next message, durable in this record before the model is asked. */
async function reopen(session: DriverSession, state: AgentStateName, maxTurns: number, message?: string): Promise<void> {
  const { writer } = session;
  const previousState = session.state();
  const current = session.context();
  // A finished run that is reopened starts a new series of pauses (it may have failed on too many).
  const pausesInARow = writer.snapshot.status === 'done' ? 0 : current.pausesInARow;
  const reopened = message === undefined ? { ...current, maxTurns, failure: null, pausesInARow } : continuedContext(current, message, maxTurns);
  writer.snapshot = agentLoopMachine.resolveState({ value: state, context: withBudget(reopened, session.parts.budgetChange ?? null) });
  const continued = message === undefined ? {} : { continued: { turn: current.turn } };
  await writer.persist('REOPEN', { reopened: { maxTurns, previousState }, ...continued });
  writer.took({ type: 'REOPEN', maxTurns, previousState, ...(message === undefined ? {} : { message }) });
  session.emit({ type: 'reopened', previousState, maxTurns, ...(message === undefined ? {} : { message }) });
}
