/**
 * Several transitions written as one unit: one append, one fsync (group commit of outcomes that
 * finished together). Each transition is still its own record, with its own number; the unit is
 * atomic where the store can make it so (appendBatch), and costs one wait for the disk anyway.
 *
 * No record of a unit of several is written as a snapshot: a snapshot names the record before it,
 * which is not yet written when the unit is encoded. The next record written alone takes the
 * snapshot that was due (the policy counts from the last snapshot written).
 */
import type { SnapshotFrom } from 'xstate';
import type { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import type { AgentStateName } from '../../machines/agent-loop.types.ts';
import { type DurableView, encodeRecord, ledgerEntriesOf, type TransitionToEncode } from '../store/journal/journal-codec.ts';
import type { JournalRecord, RecordEvent, RecordNote } from '../store/journal/journal-record.ts';
import type { AppendOptions, AppendReceipt, RunStore } from '../store/store.ts';
import { type SnapshotPolicy, withFinalMark } from './snapshot-policy.ts';

/** One transition to write: the snapshot it led to, the event that took it there. */
export interface JournalStep {
  readonly snapshot: SnapshotFrom<typeof agentLoopMachine>;
  readonly event: RecordEvent;
  readonly note: RecordNote | undefined;
  readonly at: number;
}

/** The records of the steps, numbered from `seq`, each against the one before it (the first against `durable`). */
export function encodeSteps(policy: SnapshotPolicy, durable: DurableView, seq: number, steps: readonly JournalStep[], options: AppendOptions | undefined): JournalRecord[] {
  if (steps.length === 1) return [policy.encode(durable, transitionOf(steps[0]!, seq), options)];
  let prev = durable;
  return steps.map((step, index) => {
    const next = transitionOf(step, seq + index);
    const delta = encodeRecord(prev, next);
    // Only the last record of a unit is the run's last: the one that may end it.
    const record = index === steps.length - 1 ? withFinalMark(delta, prev, next.context, options) : delta;
    const added = ledgerEntriesOf(record);
    const ledger = added.length ? new Map([...prev.ledger, ...added.map((entry) => [entry.tool_use_id, entry] as const)]) : prev.ledger;
    prev = { state: next.state, context: next.context, ledger };
    return record;
  });
}

/** A step as the codec takes it, numbered `seq`. */
function transitionOf(step: JournalStep, seq: number): TransitionToEncode {
  const transition: TransitionToEncode = { seq, at: step.at, event: step.event, state: step.snapshot.value as AgentStateName, context: step.snapshot.context };
  if (step.note) transition.note = step.note;
  return transition;
}

/** Appends the records as one unit (one fsync); the receipt of each, the wait for the disk on the last. */
export async function appendUnit(store: RunStore, records: readonly JournalRecord[], options: AppendOptions | undefined): Promise<AppendReceipt[]> {
  if (records.length === 1) return [await store.append(records[0]!, options)];
  if (!store.appendBatch) {
    // A store without units: each record after the other, only the last waiting for the disk (its sync makes all durable).
    const receipts: AppendReceipt[] = [];
    for (const [index, record] of records.entries()) receipts.push(await store.append(record, index === records.length - 1 ? options : { ...options, sync: false }));
    return receipts;
  }
  const receipt = await store.appendBatch(records, options);
  const last = records.length - 1;
  return records.map((_, index) => ({ bytes: receipt.bytesEach?.[index] ?? (index === last ? receipt.bytes : 0), ...(index === last && receipt.syncMs !== undefined ? { syncMs: receipt.syncMs } : {}) }));
}
