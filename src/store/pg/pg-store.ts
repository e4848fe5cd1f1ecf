/**
 * A run's journal in PostgreSQL, with the file store's guarantees: each transition is one row,
 * appended in one statement (so one transaction, durable at commit) whose cost does not depend
 * on the history; the journal header carries the format version; a damaged or foreign journal is
 * refused. Every write carries the writer's lease epoch and is rejected once a newer lease exists.
 */
import os from 'node:os';
import type { Pool } from 'pg';
import { RunLockedError, StoreCorruptError, StoreMissingError, StoreVersionError, StoreWriteError } from '../errors.ts';
import { checkSnapshotLink } from '../journal/fold-journal.ts';
import { checksumOf, documentJson } from '../journal/framing.ts';
import type { JournalHeader, JournalRecord } from '../journal/journal-record.ts';
import { isReadableVersion, JOURNAL_FORMAT, JOURNAL_VERSION } from '../journal/journal-record.ts';
import { recordProblem } from '../journal/journal-reader.ts';
import { CommitQueue } from '../commit-queue.ts';
import type { AppendOptions, AppendReceipt, ReplyCharge, DatabaseRunStore, ForkedRun, LoadedRun, LoadOptions, RunLock, RunStore, StoredRecord } from '../store.ts';
import { FINAL_STATES, isFinishedState } from '../../../machines/agent-loop.types.ts';
import { insertForkedRun } from './fork-rows.ts';
import { WriteFaultPlan } from '../write-faults.ts';
import { type AppendOutcome, picoUsdOf, type RunAppend, type TenantCharge } from './append-statement.ts';
import { totalTokens } from '../../../machines/agent-loop.logic.ts';
import { type AppendBatcher, queryFor, rolledBack } from './append-batcher.ts';
import { PgControlInbox } from './pg-control-inbox.ts';
import { PgSignalInbox } from './pg-signal-inbox.ts';
import { PgDecisionInbox } from './pg-decision-inbox.ts';
import { assertLease, claimRun, type Lease, LeaseKeeper, releaseLease } from './leases.ts';
import { momentNow, type WriteMoment, WriteNotes } from './write-notes.ts';
import { inTransaction } from './transaction.ts';
import type { KeysGiven } from '../../seal/keys.ts';
import { RunSealing } from '../run-sealing.ts';
import { checkedRunKey, checkedWrap, openFleetSpec, pgRunKeyPlace } from './pg-run-keys.ts';
import { forkedSpec } from '../../seal/spec-content.ts';
import { LeaseLostError } from './pg-errors.ts';

export const DEFAULT_LEASE_MS = 15_000;

export interface PgRunStoreOptions {
  /** The lease this process holds (a worker claims it first); without one, lock() claims it. */
  lease?: Lease | undefined;
  /** Length of a lease lock() claims. */
  leaseMs?: number | undefined;
  /** What to run, recorded when lock() has to create the run's row (programmatic use). */
  spec?: Record<string, unknown> | undefined;
  /** Armed write failures (tests and drills), e.g. "effect-write:3", as for the file store. */
  writeFaults?: string | undefined;
  /** Shared by the runs a worker drives: their appends go out together, several runs to a statement. */
  batcher?: AppendBatcher | undefined;
  /**
   * The run's tenant, when it has a quota or a rate limit: each reply's usage is charged to it in
   * the statement that writes the reply's usage record (a worker gives it; without it nothing is charged).
   */
  tenantCharge?: (() => { tenant: string; window: boolean } | undefined) | undefined;
  /**
   * The master keys the user holds (or a function that reads them when first needed): a run
   * created with them is sealed (its run key in da_runs.run_key); a sealed run loaded with them
   * reads as any other. See run-sealing.ts.
   */
  keys?: KeysGiven | undefined;
}

/** One appendBatch: its records, whether it waits for the disk, and the reply it counts. */
interface PendingUnit {
  records: readonly JournalRecord[];
  sync: boolean;
  reply?: ReplyCharge | undefined;
}

export class PgRunStore implements DatabaseRunStore {
  readonly location: string;
  readonly decisions: PgDecisionInbox;
  readonly control: PgControlInbox;
  readonly signals: PgSignalInbox;
  private lease: Lease | null;
  private readonly faults: WriteFaultPlan;
  /** What the last write learnt: the lease's time left, whether a control request waits. */
  private readonly notes = new WriteNotes();
  /** The run's record count while this store holds its lease (no one else writes it then); null: ask. */
  private knownRecords: number | null;
  /** One statement at a time per run, in order; appends made while one commits go into the next. */
  private readonly commits = new CommitQueue<PendingUnit, AppendReceipt>((units) => this.flushUnits(units));
  /** Seals what this store writes of a sealed run and opens what it reads (its run key in da_runs.run_key). */
  private readonly sealing: RunSealing;
  /** The master keys given: the runs this one waits for (its sub-agents') open with them too. */
  private keys: KeysGiven | undefined;
  /** The last record stored, by the checksum of its body: a sealed snapshot names it (sealedBodies). */
  private lastBody: { seq: number; crc: string } | null = null;

  constructor(
    private readonly pool: Pool,
    readonly runId: string,
    private readonly options: PgRunStoreOptions = {},
  ) {
    this.location = `PostgreSQL run ${runId}`;
    this.lease = options.lease ?? null;
    this.knownRecords = options.lease?.records ?? null;
    this.faults = new WriteFaultPlan(options.writeFaults);
    this.keys = options.keys;
    this.sealing = new RunSealing(pgRunKeyPlace(pool, runId, () => this.lease), options.keys);
    // Before the run's first record (a fleet run still queued) its inboxes seal with the run key
    // kept from its submit, when it was submitted sealed: nothing written for it is ever plain.
    const values = async () => (this.sealing.knowsRun() ? this.sealing.valuesFor(runId) : this.sealing.valuesBeforeCreate(runId));
    // A run read plain and sealed in since (keys rotate --seal-plain): what is written for it is sealed with the key now in its row.
    const sealedMeanwhile = (runKey: unknown) => this.sealing.valuesWithWrap(runId, checkedRunKey(runKey, runId));
    this.decisions = new PgDecisionInbox(pool, runId, () => this.lease, values, sealedMeanwhile);
    this.control = new PgControlInbox(pool, runId, this.notes, values, sealedMeanwhile);
    this.signals = new PgSignalInbox(pool, runId, () => this.lease, values, sealedMeanwhile);
  }

  /** Seals runs this store starts, and opens sealed runs it loads, with these keys (a program's StartOptions.keys). */
  giveKeys(keys: KeysGiven): void {
    this.keys = keys;
    this.sealing.giveKeys(keys);
  }

  sealingOfRun(): { sealed: boolean; keyHeld: boolean } {
    return this.sealing.state();
  }

  /** Its id in da_runs: a fork of it names it as its parent (and takes its spec). */
  get fleetRun(): string {
    return this.runId;
  }

  /**
   * The forked run's row (its parent's spec, the fork's header and where it stands) and its
   * records, in one transaction; 'exists' when a run of this id is there (nothing written). An
   * unfinished one is claimable at once: a worker resumes it like any run whose worker died.
   */
  async createFork(fork: ForkedRun): Promise<'created' | 'exists'> {
    const parentRun = fork.header.forkedFrom?.fleetRun;
    if (parentRun === undefined) throw new Error(`${this.location}: a fleet run is forked from a fleet run (its spec is the parent's)`);
    // With keys the child is sealed under a run key of its own, kept in its row with its records
    // (one transaction); without them a sealed parent's child is refused here, naming the key.
    const { header, wrapped, runKey } = await this.sealing.prepareCreateKeptWith(fork.header);
    this.lastBody = null;
    const { bodies, lastBody } = this.sealedBodies(fork.records);
    const keys = () => this.sealing.keys();
    const written = await insertForkedRun(this.pool, {
      parentRun,
      toRun: this.runId,
      header,
      state: fork.state,
      turn: fork.turn,
      // A child forked where its parent stopped at a limit is stopped too, not finished: a raise lets it go on.
      finished: isFinishedState(fork.state),
      awaiting: fork.awaiting?.tool_use_id ?? null,
      awaitingSince: fork.awaiting?.since ?? null,
      bodies,
      ...(wrapped
        ? { sealed: { runKey: wrapped, specOf: (spec: Record<string, unknown>) => forkedSpec(spec, (given) => openFleetSpec(this.pool, parentRun, given, keys), { fleetRun: this.runId, runKey }) } }
        : {}),
    });
    if (written) this.lastBody = lastBody;
    return written ? 'created' : 'exists';
  }

  async exists(): Promise<boolean> {
    if (this.knownRecords !== null) return this.knownRecords > 0;
    const { rows } = await this.pool.query<{ records: number }>('SELECT records FROM da_runs WHERE id = $1', [this.runId]);
    return (rows[0]?.records ?? 0) > 0;
  }

  async queued(): Promise<boolean> {
    if (this.knownRecords !== null) return this.knownRecords === 0;
    const { rows } = await this.pool.query<{ records: number }>('SELECT records FROM da_runs WHERE id = $1', [this.runId]);
    return rows[0]?.records === 0;
  }

  async awaitedRuns(): Promise<RunStore[]> {
    const { rows } = await this.pool.query<{ child_run_id: string }>('SELECT child_run_id FROM da_child_waits WHERE run_id = $1 ORDER BY child_run_id', [this.runId]);
    return rows.map((row) => new PgRunStore(this.pool, row.child_run_id, { keys: this.keys }));
  }

  /**
   * Reads the run's count first and then the records it counts, so a run a worker is writing
   * reads as a consistent prefix. A record is committed with its count in one statement, so no
   * crash leaves one missing: a missing record is refused, whatever `acceptLostRecord` says.
   */
  async load(options: LoadOptions = {}): Promise<LoadedRun> {
    // The run key comes with the row: a sealed run's load costs no query of its own for it.
    const run = await this.pool.query<{ header: JournalHeader | null; records: number; snapshot_seq: number; state: string; run_key: unknown }>(
      'SELECT header, records, snapshot_seq, state, run_key FROM da_runs WHERE id = $1',
      [this.runId],
    );
    const row = run.rows[0];
    if (!row || row.header === null || row.records === 0) throw new StoreMissingError(this.location, options.repair ? 'resume' : 'read');
    const header = row.header;
    if (header.format !== JOURNAL_FORMAT) throw new StoreCorruptError(this.location, 0, 0, `the run's header is not a ${JOURNAL_FORMAT} header`, 'start');
    if (!isReadableVersion(header.version)) throw new StoreVersionError(this.location, header.version, JOURNAL_VERSION);
    options.checkHeader?.(header);
    // A sealed run's key, before anything is read for writing: without it a writer is refused, nothing changed.
    await this.sealing.prepareLoad(header, options.repair === true, () => checkedWrap(row.run_key ?? null, this.runId));
    const contentRefused = this.sealing.contentRefusal();
    const refusal = contentRefused ? { contentRefused } : {};
    // A run at rest in a final state: its last record alone, when it carries a final mark (else, a
    // run written before the mark, the records are read from the last snapshot as below).
    if (options.fromLastSnapshot && options.finalRecord && row.records > 1 && (FINAL_STATES as readonly string[]).includes(row.state)) {
      const last = (await this.recordsFrom(row.records - 1, row.records))[0]!;
      this.lastBody = { seq: last.record.seq, crc: last.crc ?? '' };
      if (last.record.final !== undefined) return { header, records: this.sealing.openRecords([last]), tornTail: null, totalBytes: last.bytes, ...refusal };
    }
    // From the last snapshot: the record before it too, whose checksum the snapshot names.
    const from = options.fromLastSnapshot && row.snapshot_seq > 0 && row.snapshot_seq < row.records ? row.snapshot_seq - 1 : 0;
    const read = await this.recordsFrom(from, row.records);
    // The record before the snapshot is read only to check the snapshot's link to it.
    if (from > 0) checkSnapshotLink(this.location, read[0]!, read[1]!);
    const lastRead = read[read.length - 1]!;
    this.lastBody = { seq: lastRead.record.seq, crc: lastRead.crc ?? '' };
    const records = this.sealing.openRecords(from > 0 ? read.slice(1) : read);
    const totalBytes = records.reduce((sum, r) => sum + r.bytes, 0);
    return { header, records, tornTail: null, totalBytes, ...refusal };
  }

  /** Records from..count-1, each checked; refused when any the run counts is not stored. */
  private async recordsFrom(from: number, count: number): Promise<StoredRecord[]> {
    const { rows } = await this.pool.query<{ seq: number; body: string; bytes: number }>(
      'SELECT seq, body, bytes FROM da_records WHERE run_id = $1 AND seq >= $3 AND seq < $2 ORDER BY seq',
      [this.runId, count, from],
    );
    const read: StoredRecord[] = rows.map((r, position) => {
      const index = from + position;
      const damage = index === rows.length - 1 ? 'last' : 'inside';
      let document: unknown;
      try {
        document = JSON.parse(r.body);
      } catch (error) {
        throw new StoreCorruptError(this.location, index, r.seq, `record ${r.seq} is not JSON (${(error as Error).message})`, damage);
      }
      const problem = recordProblem(document, index);
      if (problem) throw new StoreCorruptError(this.location, index, r.seq, problem, damage);
      return { record: document as JournalRecord, bytes: r.bytes, offset: r.seq, crc: checksumOf(r.body) };
    });
    if (from + read.length !== count) {
      const stored = from + read.length;
      throw new StoreCorruptError(
        this.location,
        stored,
        stored,
        `the run counts ${count} records but ${stored} are stored: records ${stored} to ${count - 1} are missing`,
        'rows-missing',
        'Restore the database from a backup; nothing was changed.',
      );
    }
    return read;
  }

  /** One statement (one round trip), fenced like an append: the row of record 0 and the run's header. */
  async create(given: JournalHeader, plainFirst: JournalRecord): Promise<AppendReceipt> {
    const lease = this.requireLease();
    // With keys (or a key kept at the submit), the run key is in the row before the first record is.
    const header = await this.sealing.prepareCreate(given);
    const first = this.sealing.sealRecords([plainFirst])[0]!;
    const body = JSON.stringify(first);
    this.lastBody = null;
    const bytes = Buffer.byteLength(body);
    let outcome: AppendOutcome;
    const sent = momentNow();
    try {
      outcome = await this.send({ runId: this.runId, epoch: lease.epoch, records: [first], bodies: [body], bytes: [bytes], sync: true, header });
    } catch (error) {
      this.forgetWrites();
      throw new StoreWriteError(this.location, 'the new run', error);
    }
    if (!outcome.written) {
      await this.refused(lease, outcome);
      throw new StoreWriteError(this.location, 'the new run', new Error(`run ${this.runId} already has records`));
    }
    this.noteWrite(sent, outcome, 1);
    this.lastBody = { seq: first.seq, crc: checksumOf(body) };
    return { bytes };
  }

  /** Through the worker's batcher, with other runs' writes, or alone. */
  private async send(append: RunAppend): Promise<AppendOutcome> {
    const { batcher } = this.options;
    return batcher ? batcher.submit(append) : (await this.pool.query<AppendOutcome>(queryFor(append))).rows[0]!;
  }

  async append(record: JournalRecord, options: AppendOptions = {}): Promise<AppendReceipt> {
    return this.appendBatch([record], options);
  }

  /** One statement, so one transaction; appends made while one commits share the next commit. */
  async appendBatch(records: readonly JournalRecord[], options: AppendOptions = {}): Promise<AppendReceipt> {
    return this.commits.submit({ records, sync: options.sync !== false, ...(options.reply ? { reply: options.reply } : {}) });
  }

  /**
   * Every record of the units in one statement: the rows, and the run's count, state and what it
   * waits for, as of the last of them. Units none of which waits for the disk commit without
   * waiting for the WAL's flush (synchronous_commit off for that transaction): a later
   * commit that waits flushes them with it, in order.
   */
  private async flushUnits(units: readonly PendingUnit[]): Promise<AppendReceipt[]> {
    const lease = this.requireLease();
    const { records, bodies, lastBody } = this.sealedBodies(units.flatMap((unit) => unit.records));
    const each = bodies.map((body) => Buffer.byteLength(body));
    const last = records[records.length - 1]!;
    const what = records.length === 1 ? `record ${last.seq} (${last.event}, state ${last.state})` : `records ${records[0]!.seq} to ${last.seq} (one unit)`;
    for (const record of records) {
      const fault = this.faults.check(record);
      if (fault) throw new StoreWriteError(this.location, what, fault);
    }
    let outcome: AppendOutcome;
    const sent = momentNow();
    try {
      const charge = this.chargeOf(units);
      outcome = await this.send({ runId: this.runId, epoch: lease.epoch, records, bodies, bytes: each, sync: units.some((unit) => unit.sync), ...(charge ? { charge } : {}) });
    } catch (error) {
      this.forgetWrites();
      throw new StoreWriteError(this.location, what, error, !rolledBack(error));
    }
    if (!outcome.written) {
      await this.refused(lease, outcome);
      throw new LeaseLostError(this.runId, lease.epoch, null, null);
    }
    this.noteWrite(sent, outcome, last.seq + 1);
    this.lastBody = lastBody;
    let at = 0;
    return units.map((unit) => {
      const bytesEach = each.slice(at, (at += unit.records.length));
      return { bytes: bytesEach.reduce((sum, n) => sum + n, 0), bytesEach };
    });
  }

  /** What the units' replies charge to the run's tenant, when it is charged. */
  private chargeOf(units: readonly PendingUnit[]): TenantCharge | undefined {
    if (!this.options.tenantCharge || !units.some((unit) => unit.reply)) return undefined;
    const tenant = this.options.tenantCharge();
    if (!tenant) return undefined;
    let charge: TenantCharge | undefined;
    for (const { reply } of units) {
      if (!reply) continue;
      charge ??= { tenant: tenant.tenant, picoUsd: 0n, tokens: 0, replies: 0, window: tenant.window };
      charge.picoUsd += picoUsdOf(reply.costUsd ?? 0);
      charge.tokens += totalTokens(reply.usage);
      charge.replies += 1;
    }
    return charge;
  }

  /**
   * The records as stored and their bodies. A snapshot names the record before it by the checksum
   * of its body, which the runtime computes from the record it handed over: for a sealed run that
   * is the sealed body's, so the snapshot is linked to it here (as the file store links to the line
   * as written). A plain run's records are stored as given.
   */
  private sealedBodies(given: readonly JournalRecord[]): { records: JournalRecord[]; bodies: string[]; lastBody: { seq: number; crc: string } | null } {
    const sealed = this.sealing.sealRecords(given);
    if (sealed === given) return { records: given as JournalRecord[], bodies: given.map((record) => documentJson(record)), lastBody: null };
    const records: JournalRecord[] = [];
    const bodies: string[] = [];
    let lastBody = this.lastBody;
    for (const stored of sealed) {
      const record = linkedTo(stored, lastBody);
      const body = documentJson(record);
      records.push(record);
      bodies.push(body);
      lastBody = { seq: record.seq, crc: checksumOf(body) };
    }
    return { records, bodies, lastBody };
  }

  /** Answered by the last write while it proves the lease still held (write-notes.ts); else one query. */
  async assertOwnership(): Promise<void> {
    if (this.notes.leaseSurelyHeld()) return;
    await assertLease(this.pool, this.requireLease());
  }

  /**
   * A write the statement refused: when the run's row shows another lease, that is the answer;
   * when it still shows ours (a claim committed while the statement waited for the row), ask again.
   */
  private async refused(lease: Lease, outcome: Pick<AppendOutcome, 'lease_epoch' | 'lease_owner'>): Promise<void> {
    this.forgetWrites();
    if (outcome.lease_epoch !== null && Number(outcome.lease_epoch) !== lease.epoch) {
      throw new LeaseLostError(lease.runId, lease.epoch, Number(outcome.lease_epoch), outcome.lease_owner);
    }
    if (outcome.lease_epoch === null) throw new LeaseLostError(lease.runId, lease.epoch, null, null);
    await assertLease(this.pool, lease);
  }

  /** A write whose fate is unknown (it may have committed before the connection broke): ask next time. */
  private forgetWrites(): void {
    this.notes.forget();
    this.knownRecords = null;
  }

  private noteWrite(sent: WriteMoment, outcome: Pick<AppendOutcome, 'lease_left_ms' | 'controls'>, records: number): void {
    this.notes.noteWrite(sent, outcome.lease_left_ms, outcome.controls);
    this.knownRecords = records;
  }

  /**
   * With a lease given by a worker, the worker keeps and releases it. Without one (a program
   * driving a run directly), this claims the run's lease, keeps it renewed and releases it.
   */
  async lock(): Promise<RunLock> {
    if (this.lease) {
      const from = this.lease.takenFrom;
      const takenOver = from ? { holder: from.owner, why: `its lease expired at ${from.expiredAt}`, waitedMs: 0 } : null;
      return { holder: this.lease.owner, takenOver, release: async () => {} };
    }
    const owner = `${os.hostname()}:${process.pid}`;
    const leaseMs = this.options.leaseMs ?? DEFAULT_LEASE_MS;
    await this.pool.query('INSERT INTO da_runs (id, spec) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [this.runId, JSON.stringify(this.options.spec ?? { kind: 'api' })]);
    const lease = await claimRun(this.pool, this.runId, owner, leaseMs);
    if (!lease) {
      const { rows } = await this.pool.query<{ lease_owner: string | null; lease_expires_at: Date | null }>(
        'SELECT lease_owner, lease_expires_at FROM da_runs WHERE id = $1',
        [this.runId],
      );
      const row = rows[0];
      throw new RunLockedError(this.location, `${row?.lease_owner ?? 'another worker'}, lease until ${row?.lease_expires_at?.toISOString() ?? '?'}`);
    }
    this.lease = lease;
    const keeper = new LeaseKeeper(this.pool, lease, leaseMs, () => {}).start();
    return {
      holder: owner,
      release: async () => {
        keeper.stop();
        this.forgetWrites();
        await releaseLease(this.pool, lease).catch(() => {});
        this.lease = null;
      },
    };
  }

  /** Moves the run aside under a new id (records follow it) and leaves a fresh row, still leased, in its place. */
  async archive(): Promise<string> {
    const lease = this.requireLease();
    const archivedId = `${this.runId}~archived~${new Date().toISOString()}`;
    try {
      await inTransaction(this.pool, async (client) => {
        await client.query('UPDATE da_runs SET id = $2, finished = true, lease_owner = NULL, lease_expires_at = NULL WHERE id = $1', [this.runId, archivedId]);
        await client.query(
          // Not its run key: that stays with the archived run, and the next run gets its own (so shredding one leaves the other).
          `INSERT INTO da_runs (id, spec, lease_owner, lease_epoch, lease_expires_at)
           SELECT $1, spec, $3, $4, now() + interval '1 minute' FROM da_runs WHERE id = $2`,
          [this.runId, archivedId, lease.owner, lease.epoch],
        );
      });
    } catch (error) {
      throw new StoreWriteError(this.location, 'the archived run', error);
    } finally {
      this.forgetWrites();
      this.sealing.forget();
    }
    return `PostgreSQL run ${archivedId}`;
  }

  private requireLease(): Lease {
    if (!this.lease) throw new Error(`PgRunStore for ${this.runId} used without a lease: call lock() first or pass the worker's lease`);
    return this.lease;
  }
}

/** A sealed snapshot record, linked to the stored body of the record it follows (when that is known and differs). */
function linkedTo(record: JournalRecord, lastBody: { seq: number; crc: string } | null): JournalRecord {
  const after = record.snapshot?.after;
  if (!after || !lastBody || after.seq !== lastBody.seq || after.crc === lastBody.crc) return record;
  return { ...record, snapshot: { ...record.snapshot!, after: { seq: after.seq, crc: lastBody.crc } } };
}
