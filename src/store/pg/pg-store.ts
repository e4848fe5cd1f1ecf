/**
 * A run's journal in PostgreSQL, with the file store's guarantees: each transition is one row,
 * appended in one statement (so one transaction, durable at commit) whose cost does not depend
 * on the history; the journal header carries the format version; a damaged or foreign journal is
 * refused. Every write carries the writer's lease epoch and is rejected once a newer lease exists.
 */
import os from 'node:os';
import type { Pool } from 'pg';
import { FINAL_STATES } from '../../../machines/agent-loop.types.ts';
import { RunLockedError, StoreCorruptError, StoreMissingError, StoreVersionError, StoreWriteError } from '../errors.ts';
import { documentJson } from '../framing.ts';
import type { JournalHeader, JournalRecord } from '../journal-record.ts';
import { isReadableVersion, JOURNAL_FORMAT, JOURNAL_VERSION } from '../journal-record.ts';
import { recordProblem } from '../journal-reader.ts';
import type { AppendReceipt, LoadedRun, LoadOptions, RunLock, RunStore, StoredRecord } from '../store.ts';
import { WriteFaultPlan } from '../write-faults.ts';
import { PgControlInbox } from './pg-control-inbox.ts';
import { PgDecisionInbox } from './pg-decision-inbox.ts';
import { assertLease, claimRun, type Lease, LeaseKeeper, LeaseLostError, lockLeaseRow, releaseLease } from './leases.ts';

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
}

export class PgRunStore implements RunStore {
  readonly location: string;
  readonly decisions: PgDecisionInbox;
  readonly control: PgControlInbox;
  private lease: Lease | null;
  private readonly faults: WriteFaultPlan;

  constructor(
    private readonly pool: Pool,
    readonly runId: string,
    private readonly options: PgRunStoreOptions = {},
  ) {
    this.location = `PostgreSQL run ${runId}`;
    this.lease = options.lease ?? null;
    this.faults = new WriteFaultPlan(options.writeFaults);
    this.decisions = new PgDecisionInbox(pool, runId, () => this.lease);
    this.control = new PgControlInbox(pool, runId);
  }

  async exists(): Promise<boolean> {
    const { rows } = await this.pool.query<{ records: number }>('SELECT records FROM da_runs WHERE id = $1', [this.runId]);
    return (rows[0]?.records ?? 0) > 0;
  }

  /**
   * Reads the run's count first and then the records it counts, so a run a worker is writing
   * reads as a consistent prefix. A record is committed with its count in one statement, so no
   * crash leaves one missing: a missing record is refused, whatever `acceptLostRecord` says.
   */
  async load(options: LoadOptions = {}): Promise<LoadedRun> {
    const run = await this.pool.query<{ header: JournalHeader | null; records: number }>('SELECT header, records FROM da_runs WHERE id = $1', [this.runId]);
    const row = run.rows[0];
    if (!row || row.header === null || row.records === 0) throw new StoreMissingError(this.location, options.repair ? 'resume' : 'read');
    const header = row.header;
    if (header.format !== JOURNAL_FORMAT) throw new StoreCorruptError(this.location, 0, 0, `the run's header is not a ${JOURNAL_FORMAT} header`, 'start');
    if (!isReadableVersion(header.version)) throw new StoreVersionError(this.location, header.version, JOURNAL_VERSION);
    options.checkHeader?.(header);
    const { rows } = await this.pool.query<{ seq: number; body: string; bytes: number }>(
      'SELECT seq, body, bytes FROM da_records WHERE run_id = $1 AND seq < $2 ORDER BY seq',
      [this.runId, row.records],
    );
    const records: StoredRecord[] = rows.map((r, index) => {
      const damage = index === rows.length - 1 ? 'last' : 'inside';
      let document: unknown;
      try {
        document = JSON.parse(r.body);
      } catch (error) {
        throw new StoreCorruptError(this.location, index, r.seq, `record ${r.seq} is not JSON (${(error as Error).message})`, damage);
      }
      const problem = recordProblem(document, index);
      if (problem) throw new StoreCorruptError(this.location, index, r.seq, problem, damage);
      return { record: document as JournalRecord, bytes: r.bytes, offset: r.seq };
    });
    if (records.length !== row.records) {
      throw new StoreCorruptError(
        this.location,
        records.length,
        records.length,
        `the run counts ${row.records} records but ${records.length} are stored: records ${records.length} to ${row.records - 1} are missing`,
        'rows-missing',
        'Restore the database from a backup; nothing was changed.',
      );
    }
    const totalBytes = records.reduce((sum, r) => sum + r.bytes, 0);
    return { header, records, tornTail: null, totalBytes };
  }

  async create(header: JournalHeader, first: JournalRecord): Promise<AppendReceipt> {
    const lease = this.requireLease();
    const body = JSON.stringify(first);
    const bytes = Buffer.byteLength(body);
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const row = await lockLeaseRow(client, lease);
      if (row.records > 0) throw new Error(`run ${this.runId} already has records`);
      await client.query('INSERT INTO da_records (run_id, seq, epoch, body, bytes) VALUES ($1, 0, $2, $3, $4)', [this.runId, lease.epoch, body, bytes]);
      await client.query(
        `UPDATE da_runs SET header = $2, state = $3, turn = $4, records = 1, finished = false, updated_at = now() WHERE id = $1`,
        [this.runId, JSON.stringify(header), first.state, first.turn ?? 0],
      );
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      if (error instanceof LeaseLostError) throw error;
      throw new StoreWriteError(this.location, 'the new run', error);
    } finally {
      client.release();
    }
    return { bytes };
  }

  async append(record: JournalRecord): Promise<AppendReceipt> {
    const lease = this.requireLease();
    const body = documentJson(record);
    const bytes = Buffer.byteLength(body);
    const fault = this.faults.check(record);
    if (fault) throw new StoreWriteError(this.location, `record ${record.seq} (${record.event}, state ${record.state})`, fault);
    let accepted: number;
    try {
      const result = await this.pool.query(
        `WITH holder AS (
           SELECT id FROM da_runs WHERE id = $1 AND lease_epoch = $2 FOR UPDATE
         ), added AS (
           INSERT INTO da_records (run_id, seq, epoch, body, bytes)
           SELECT $1, $3, $2, $4, $5 FROM holder
           RETURNING seq
         )
         UPDATE da_runs SET state = $6, turn = coalesce($7, turn), records = $3 + 1, finished = $8, updated_at = now(),
                awaiting = CASE WHEN $9 THEN $10::text ELSE awaiting END,
                awaiting_since = CASE WHEN $9 THEN to_timestamp($11::double precision / 1000) ELSE awaiting_since END
          WHERE id = $1 AND EXISTS (SELECT 1 FROM added)`,
        [
          this.runId,
          lease.epoch,
          record.seq,
          body,
          bytes,
          record.state,
          record.turn ?? null,
          FINAL_STATES.includes(record.state),
          // What the run waits for, kept on the row so a claim can tell whether a decision for it exists.
          record.awaiting !== undefined,
          record.awaiting?.tool_use_id ?? null,
          record.awaiting?.since ?? null,
        ],
      );
      accepted = result.rowCount ?? 0;
    } catch (error) {
      throw new StoreWriteError(this.location, `record ${record.seq} (${record.event}, state ${record.state})`, error);
    }
    if (accepted !== 1) {
      await assertLease(this.pool, lease);
      throw new LeaseLostError(this.runId, lease.epoch, null, null);
    }
    return { bytes };
  }

  async assertOwnership(): Promise<void> {
    await assertLease(this.pool, this.requireLease());
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
        await releaseLease(this.pool, lease).catch(() => {});
        this.lease = null;
      },
    };
  }

  /** Moves the run aside under a new id (records follow it) and leaves a fresh row, still leased, in its place. */
  async archive(): Promise<string> {
    const lease = this.requireLease();
    const archivedId = `${this.runId}~archived~${new Date().toISOString()}`;
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('UPDATE da_runs SET id = $2, finished = true, lease_owner = NULL, lease_expires_at = NULL WHERE id = $1', [this.runId, archivedId]);
      await client.query(
        `INSERT INTO da_runs (id, spec, lease_owner, lease_epoch, lease_expires_at)
         SELECT $1, spec, $3, $4, now() + interval '1 minute' FROM da_runs WHERE id = $2`,
        [this.runId, archivedId, lease.owner, lease.epoch],
      );
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw new StoreWriteError(this.location, 'the archived run', error);
    } finally {
      client.release();
    }
    return `PostgreSQL run ${archivedId}`;
  }

  private requireLease(): Lease {
    if (!this.lease) throw new Error(`PgRunStore for ${this.runId} used without a lease: call lock() first or pass the worker's lease`);
    return this.lease;
  }
}
