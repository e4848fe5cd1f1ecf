/**
 * appendBatch on the PostgreSQL store: one statement, so one transaction: a batch that fails
 * anywhere leaves none of its rows and the run's count unchanged. Appends made while one
 * commits share the next commit; a record appended without a sync commits without waiting for
 * the WAL to be flushed, and the next synced commit flushes it.
 */
import { describe, expect, it, vi } from 'vitest';
import { StoreWriteError } from '../../src/store/errors.ts';
import { JOURNAL_FORMAT, JOURNAL_VERSION } from '../../src/store/journal/journal-record.ts';
import { LeaseLostError } from '../../src/store/pg/pg-errors.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { storeRecord } from '../helpers/journal-records.ts';
import { pool, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';

const HEADER = { format: JOURNAL_FORMAT, version: JOURNAL_VERSION, runId: 'x', createdAt: 1 } as const;

async function newRun(runId: string): Promise<PgRunStore> {
  const store = new PgRunStore(pool, runId, { leaseMs: 60_000 });
  await store.lock();
  await store.create({ ...HEADER, runId }, storeRecord(0));
  await store.append(storeRecord(1));
  return store;
}

async function rowsOf(runId: string) {
  const { rows } = await pool.query<{ seq: number }>('SELECT seq FROM da_records WHERE run_id = $1 ORDER BY seq', [runId]);
  const run = await pool.query<{ records: number; state: string }>('SELECT records, state FROM da_runs WHERE id = $1', [runId]);
  return { seqs: rows.map((r) => r.seq), records: run.rows[0]!.records, state: run.rows[0]!.state };
}

/**
 * Has the WAL writer flush now. It is nudged whenever an asynchronous commit completes a WAL
 * page, and flushes at once when it has not flushed for wal_writer_delay: one of the unsynced
 * appends below could meet that and be flushed before it is looked at. Right after a flush of its
 * own it only writes for the next wal_writer_delay (10 s), longer than the appends take.
 */
async function walWriterJustFlushed(unflushed: () => Promise<boolean>): Promise<void> {
  await pool.query('CREATE TABLE IF NOT EXISTS wal_nudge (filler text)');
  await pool.query('ALTER TABLE wal_nudge ALTER COLUMN filler SET STORAGE EXTERNAL');
  const client = await pool.connect();
  try {
    // Uncompressed, and more than a WAL page: an asynchronous commit that completes pages.
    await client.query('BEGIN');
    await client.query('SET LOCAL synchronous_commit = off');
    await client.query(`INSERT INTO wal_nudge SELECT string_agg(md5(i::text), '') FROM generate_series(1, 1000) AS i`);
    await client.query('COMMIT');
  } finally {
    client.release();
  }
  const deadline = Date.now() + 5_000;
  while ((await unflushed()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe.skipIf(!postgresAvailable())('appendBatch on the PostgreSQL store', () => {
  usePostgres({ connections: 8 });

  it('writes the unit and the run’s count and state as of its last record', async () => {
    const store = await newRun('batch');
    const receipt = await store.appendBatch([storeRecord(2), storeRecord(3), storeRecord(4)]);
    expect(receipt.bytesEach).toHaveLength(3);
    expect(await rowsOf('batch')).toEqual({ seqs: [0, 1, 2, 3, 4], records: 5, state: 'closed' });
    expect((await store.load()).records.map((r) => r.record.seq)).toEqual([0, 1, 2, 3, 4]);
  });

  it('one transaction: a batch that fails at its last row leaves none of its rows', async () => {
    const store = await newRun('torn');
    // Row 3 exists already, so the batch's last INSERT fails: the whole statement is rolled back.
    await pool.query(`INSERT INTO da_records (run_id, seq, epoch, body, bytes) VALUES ('torn', 3, 1, '{}', 2)`);
    const error = await store.appendBatch([storeRecord(2), storeRecord(3)]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreWriteError);
    expect((error as StoreWriteError).what).toBe('records 2 to 3 (one unit)');
    expect(await rowsOf('torn')).toEqual({ seqs: [0, 1, 3], records: 2, state: 'pendingTool' });
  });

  it('appends made while one commits share the next commit, in order', async () => {
    const store = await newRun('grouped');
    const appends = [2, 3, 4, 5].map((seq) => store.append(storeRecord(seq)));
    await Promise.all(appends);
    expect(await rowsOf('grouped')).toEqual({ seqs: [0, 1, 2, 3, 4, 5], records: 6, state: 'pendingTool' });
    expect((store as unknown as { commits: { groupedFlushes: number } }).commits.groupedFlushes).toBe(1);
  });

  it('a record appended without a sync commits without waiting for the WAL flush; the next synced one flushes it', async () => {
    const store = await newRun('unsynced');
    // The WAL writer flushes on its own every wal_writer_delay: at most every 10 s in this private cluster.
    await pool.query(`ALTER SYSTEM SET wal_writer_delay = '10s'`);
    await pool.query('SELECT pg_reload_conf()');
    const unflushed = async () => (await pool.query<{ behind: boolean }>('SELECT pg_current_wal_flush_lsn() < pg_current_wal_insert_lsn() AS behind')).rows[0]!.behind;
    await walWriterJustFlushed(unflushed);
    const after = { unsynced: 0, synced: 0 };
    for (let seq = 2; seq < 22; seq += 2) {
      await store.append(storeRecord(seq), { sync: false });
      if (await unflushed()) after.unsynced += 1;
      await store.append(storeRecord(seq + 1));
      if (await unflushed()) after.synced += 1;
    }
    // Other WAL (a hint bit, the statistics) may now and then follow a synced commit before the check.
    expect(after.unsynced).toBe(10);
    expect(after.synced).toBeLessThanOrEqual(2);
    expect((await rowsOf('unsynced')).records).toBe(22);
  });

  it('create is one statement: one round trip, fenced by the lease, refused on a run that has records', async () => {
    const store = new PgRunStore(pool, 'created', { leaseMs: 60_000 });
    await store.lock();
    const queries = vi.spyOn(pool, 'query');
    await store.create({ ...HEADER, runId: 'created' }, storeRecord(0));
    // One pool.query (its own connection checkout), where a transaction took BEGIN, a locking SELECT, two writes and COMMIT.
    expect(queries).toHaveBeenCalledTimes(1);
    vi.restoreAllMocks();
    expect(await rowsOf('created')).toEqual({ seqs: [0], records: 1, state: 'awaitingModel' });
    const again = await store.create({ ...HEADER, runId: 'created' }, storeRecord(0)).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(StoreWriteError);
    expect((again as Error).message).toContain('already has records');
    await pool.query(`UPDATE da_runs SET lease_epoch = lease_epoch + 1, records = 0 WHERE id = 'created'`);
    await pool.query(`DELETE FROM da_records WHERE run_id = 'created'`);
    await expect(store.create({ ...HEADER, runId: 'created' }, storeRecord(0))).rejects.toBeInstanceOf(LeaseLostError);
    expect((await rowsOf('created')).seqs).toEqual([]);
  });
});
