/**
 * When a record is written as a snapshot (the whole state; see encodeSnapshotRecord), and what
 * the process keeps after one. A snapshot is the transition's own record written in full, so it
 * costs no extra append, no extra fsync and no new crash point: a kill while it is written is a
 * kill while that record is written, which the store already recovers from.
 *
 * Written every `every` records (so a resume reads at most that many records after it) and at
 * each record that shrinks the conversation (a compaction: the live context is then small, and
 * what came before it is never read again by a resume).
 *
 * By default only compactions write one (every = 0): a resume then reads from the last
 * compaction, which is as much as the live context it needs anyway. A count (`snapshotEvery`,
 * DURABLE_AGENT_SNAPSHOT_EVERY) adds one every that many records: in a run that never compacts,
 * each restates a conversation that only grows (quadratic bytes: a 10,000-turn run of 30 MB wrote
 * 494 MB at every 1,000 records) to save a resume only the fold of what it reads anyway.
 */
import { checksumOf, documentJson } from '../store/journal/framing.ts';
import type { DurableView, TransitionToEncode } from '../store/journal/journal-codec.ts';
import { type AgentContext, FINAL_STATES } from '../../machines/agent-loop.types.ts';
import { encodeFinalMark, encodeRecord, encodeSnapshotRecord, ledgerEntriesOf, ledgerOfSnapshot } from '../store/journal/journal-codec.ts';
import type { JournalRecord } from '../store/journal/journal-record.ts';
import type { AppendOptions } from '../store/store.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** Records between two snapshots by default: none, only compactions write one (see above). */
export const DEFAULT_SNAPSHOT_EVERY = 0;
/** Overrides the default (tests and drills write snapshots every few records). */
export const SNAPSHOT_EVERY_ENV = 'DURABLE_AGENT_SNAPSHOT_EVERY';
export const SNAPSHOT_EVERY_RANGE = { min: 0, max: 1_000_000_000 } as const;

/**
 * Events whose record is always a snapshot, whatever the count: a compaction (its record
 * rewrites the conversation anyway, and a resume need not read what it replaced).
 */
export const SNAPSHOT_EVENTS: ReadonlySet<string> = new Set(['COMPACTED']);

/** Whether the record of this event is written as a snapshot regardless of the count (the compaction hook). */
export function snapshotsAtEvent(event: string): boolean {
  return SNAPSHOT_EVENTS.has(event);
}

export class SnapshotEveryError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'SnapshotEveryError';
  constructor(readonly value: unknown) {
    const { min, max } = SNAPSHOT_EVERY_RANGE;
    super(`snapshotEvery (or ${SNAPSHOT_EVERY_ENV}) must be a whole number of records from ${min} (only at compactions) to ${max}, not ${String(value)}; nothing was started.`);
  }
}

/** The option, else the environment, else the default. */
export function snapshotEveryOf(option: number | undefined, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[SNAPSHOT_EVERY_ENV];
  const value = option ?? (raw === undefined || raw === '' ? DEFAULT_SNAPSHOT_EVERY : Number(raw));
  const { min, max } = SNAPSHOT_EVERY_RANGE;
  if (!Number.isSafeInteger(value) || value < min || value > max) throw new SnapshotEveryError(option ?? raw);
  return value;
}

/**
 * The record with its final mark (see FinalMark) when it leaves the run in a final state and the
 * disk is waited for: a resume that only answers then reads this record alone. One the machine
 * could lose with the disk is left as it is (the record before it would answer for a state that
 * is not the last). `prev` is the view before the record.
 */
export function withFinalMark(record: JournalRecord, prev: DurableView, context: AgentContext, options: AppendOptions | undefined): JournalRecord {
  if (options?.sync === false || !FINAL_STATES.includes(record.state)) return record;
  return { ...record, final: encodeFinalMark(context, ledgerEntriesAfter(record, prev)) };
}

/** How many ledger entries a load from the last snapshot holds once `record` is written. */
function ledgerEntriesAfter(record: JournalRecord, prev: DurableView): number {
  if (record.snapshot) return ledgerOfSnapshot(record).size;
  let count = prev.ledger.size;
  for (const entry of ledgerEntriesOf(record)) if (!prev.ledger.has(entry.tool_use_id)) count++;
  return count;
}

export class SnapshotPolicy {
  /** The record the next one follows (a snapshot names it). */
  private last: JournalRecord;
  private lastSnapshotSeq: number;

  /**
   * `first`: the first record of the load a resume started from (a snapshot, or record 0), or
   * the record that created the run; `last`: the last record written.
   */
  constructor(
    readonly every: number,
    first: JournalRecord,
    last: JournalRecord,
  ) {
    this.last = last;
    this.lastSnapshotSeq = first.seq;
  }

  /** The record for this transition: written in full when a snapshot is due. */
  encode(prev: DurableView, next: TransitionToEncode, options?: AppendOptions): JournalRecord {
    const delta = encodeRecord(prev, next);
    if (!this.isDue(prev, delta, options)) return withFinalMark(delta, prev, next.context, options);
    return withFinalMark(encodeSnapshotRecord(prev, next, { seq: this.last.seq, crc: checksumOf(documentJson(this.last)) }), prev, next.context, options);
  }

  /**
   * The durable view once `record` is written. After a snapshot it holds only the ledger entries
   * the snapshot kept: a resume from it holds no more, and a long run must not hold every entry
   * it ever wrote.
   */
  durableAfter(record: JournalRecord, durable: DurableView, state: DurableView['state'], context: DurableView['context']): DurableView {
    this.last = record;
    if (record.snapshot) {
      this.lastSnapshotSeq = record.seq;
      return { state, context, ledger: ledgerOfSnapshot(record) };
    }
    for (const entry of ledgerEntriesOf(record)) durable.ledger.set(entry.tool_use_id, entry);
    return { state, context, ledger: durable.ledger };
  }

  private isDue(prev: DurableView, delta: JournalRecord, options: AppendOptions | undefined): boolean {
    // A record written without waiting for the disk may be lost with the machine: not one a resume should start from.
    if (options?.sync === false) return false;
    if (snapshotsAtEvent(delta.event)) return true;
    const shrunk = delta.messages !== undefined && delta.messages.from + delta.messages.add.length < prev.context.messages.length;
    // A compaction of either kind moves `compacted`; a server one may leave the list as long as it was.
    if (shrunk || (delta.compacted !== undefined && delta.compacted !== null)) return true;
    return this.every > 0 && delta.seq - this.lastSnapshotSeq >= this.every;
  }
}
