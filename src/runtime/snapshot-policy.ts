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
 * By default (neither the option nor the environment variable set) a count-due snapshot is
 * written only where it pays: once a resume would otherwise read at least twice what it holds
 * (the last snapshot and everything written since, against the live conversation). A run that
 * never compacts restates a conversation that only grows: written every 1,000 records regardless,
 * its snapshots cost more bytes than everything else (quadratic in the run's length: 494 MB for a
 * 10,000-turn run of 30 MB) and save a resume little, since it reads the whole conversation
 * anyway. A compaction's record is a snapshot whatever the rule. Set explicitly, the count alone
 * decides (drills write one at every record).
 */
import { checksumOf, documentJson } from '../store/framing.ts';
import type { DurableView, TransitionToEncode } from '../store/journal-codec.ts';
import { encodeRecord, encodeSnapshotRecord, ledgerEntriesOf, ledgerOfSnapshot } from '../store/journal-codec.ts';
import type { JournalRecord } from '../store/journal-record.ts';
import type { AppendOptions } from '../store/store.ts';
import type { Message } from '../../machines/agent-loop.types.ts';
import { messageChars } from '../compaction/estimate-tokens.ts';

/** Records between two snapshots by default: a resume folds at most this many records after the last one. */
export const DEFAULT_SNAPSHOT_EVERY = 1000;
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

export class SnapshotEveryError extends RangeError {
  override readonly name = 'SnapshotEveryError';
  constructor(readonly value: unknown) {
    const { min, max } = SNAPSHOT_EVERY_RANGE;
    super(`snapshotEvery (or ${SNAPSHOT_EVERY_ENV}) must be a whole number of records from ${min} (only at compactions) to ${max}, not ${String(value)}; nothing was started.`);
  }
}

/** Default rule: what a resume would read (last snapshot + written since) against the live conversation. */
export const SNAPSHOT_PAYS_AT = 2;

/** The option, else the environment, else the default. */
export function snapshotEveryOf(option: number | undefined, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[SNAPSHOT_EVERY_ENV];
  const value = option ?? (raw === undefined || raw === '' ? DEFAULT_SNAPSHOT_EVERY : Number(raw));
  const { min, max } = SNAPSHOT_EVERY_RANGE;
  if (!Number.isSafeInteger(value) || value < min || value > max) throw new SnapshotEveryError(option ?? raw);
  return value;
}

/** The policy a run uses: the default rule waits for growth too; an explicit count decides alone. */
export function snapshotPolicyFor(option: number | undefined, first: JournalRecord, last: JournalRecord, env: NodeJS.ProcessEnv = process.env): SnapshotPolicy {
  const explicit = option !== undefined || (env[SNAPSHOT_EVERY_ENV] ?? '') !== '';
  return new SnapshotPolicy(snapshotEveryOf(option, env), first, last, { amortized: !explicit });
}

export class SnapshotPolicy {
  /** The record the next one follows (a snapshot names it). */
  private last: JournalRecord;
  private lastSnapshotSeq: number;
  private readonly amortized: boolean;
  /** Default rule: the growth is looked at once per `every` records, never per record. */
  private nextCheckSeq: number;
  /** Messages the last snapshot holds (the first ones of the live conversation). */
  private snapshotMessages: number;
  /** Their characters, measured at the first look after the snapshot. */
  private snapshotChars: number | null = null;
  /** Messages up to this index are counted in the snapshot or in `writtenSince`. */
  private measuredUpTo: number;
  /** Characters of the messages written since the last snapshot (as far as measured). */
  private writtenSince = 0;

  /**
   * `first`: the first record of the load a resume started from (a snapshot, or record 0), or
   * the record that created the run; `last`: the last record written.
   */
  constructor(
    readonly every: number,
    first: JournalRecord,
    last: JournalRecord,
    options: { amortized?: boolean } = {},
  ) {
    this.last = last;
    this.lastSnapshotSeq = first.seq;
    this.amortized = options.amortized ?? false;
    this.nextCheckSeq = first.seq + every;
    // A resume from a snapshot counts what was written after it; from record 0, everything.
    this.snapshotMessages = first.snapshot ? (first.messages?.add.length ?? 0) : 0;
    this.measuredUpTo = this.snapshotMessages;
  }

  /** The record for this transition: written in full when a snapshot is due. */
  encode(prev: DurableView, next: TransitionToEncode, options?: AppendOptions): JournalRecord {
    const delta = encodeRecord(prev, next);
    if (!this.isDue(prev, delta, next.context.messages, options)) return delta;
    return encodeSnapshotRecord(prev, next, { seq: this.last.seq, crc: checksumOf(documentJson(this.last)) });
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
      this.nextCheckSeq = record.seq + this.every;
      this.snapshotMessages = context.messages.length;
      this.snapshotChars = null;
      this.measuredUpTo = context.messages.length;
      this.writtenSince = 0;
      return { state, context, ledger: ledgerOfSnapshot(record) };
    }
    for (const entry of ledgerEntriesOf(record)) durable.ledger.set(entry.tool_use_id, entry);
    return { state, context, ledger: durable.ledger };
  }

  private isDue(prev: DurableView, delta: JournalRecord, messages: readonly Message[], options: AppendOptions | undefined): boolean {
    // A record written without waiting for the disk may be lost with the machine: not one a resume should start from.
    if (options?.sync === false) return false;
    if (snapshotsAtEvent(delta.event)) return true;
    const shrunk = delta.messages !== undefined && delta.messages.from + delta.messages.add.length < prev.context.messages.length;
    // A compaction of either kind moves `compacted`; a server one may leave the list as long as it was.
    if (shrunk || (delta.compacted !== undefined && delta.compacted !== null)) return true;
    if (this.every <= 0 || delta.seq - this.lastSnapshotSeq < this.every) return false;
    return !this.amortized || this.pays(delta.seq, messages);
  }

  /** Whether a resume would now read SNAPSHOT_PAYS_AT times what a snapshot would hold. */
  private pays(seq: number, messages: readonly Message[]): boolean {
    if (seq < this.nextCheckSeq) return false;
    this.nextCheckSeq = seq + this.every;
    if (this.snapshotChars === null) {
      this.snapshotChars = 0;
      for (let index = 0; index < Math.min(this.snapshotMessages, messages.length); index++) this.snapshotChars += messageChars(messages[index]!);
    }
    for (let index = this.measuredUpTo; index < messages.length; index++) this.writtenSince += messageChars(messages[index]!);
    this.measuredUpTo = messages.length;
    let live = 0;
    for (const message of messages) live += messageChars(message);
    return this.snapshotChars + this.writtenSince >= SNAPSHOT_PAYS_AT * live;
  }
}
