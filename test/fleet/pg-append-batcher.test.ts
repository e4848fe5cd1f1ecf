/**
 * Several runs' records in one statement (the AppendBatcher a worker shares among its runs):
 * each run's write is fenced by its own lease inside the statement, so a run whose lease was
 * taken over fails alone while the others land; a statement the server refuses is rolled back
 * whole and its runs written one by one, so one bad write fails no other run; a run's first
 * record goes in the same statement as other runs' appends. Claims and releases of several
 * runs take one statement each.
 */
import { describe, expect, it } from 'vitest';
import { StoreWriteError } from '../../src/store/errors.ts';
import { JOURNAL_FORMAT, JOURNAL_VERSION } from '../../src/store/journal/journal-record.ts';
import { AppendBatcher } from '../../src/store/pg/append-batcher.ts';
import { claimNextRuns, releaseLeases } from '../../src/store/pg/leases.ts';
import { LeaseLostError } from '../../src/store/pg/pg-errors.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { storeRecord } from '../helpers/journal-records.ts';
import { pool, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';

const HEADER = { format: JOURNAL_FORMAT, version: JOURNAL_VERSION, runId: 'x', createdAt: 1 } as const;

async function leasedStore(runId: string, batcher: AppendBatcher): Promise<PgRunStore> {
  const store = new PgRunStore(pool, runId, { leaseMs: 60_000, batcher });
  await store.lock();
  return store;
}

async function rowsOf(runId: string) {
  const { rows } = await pool.query<{ seq: number; epoch: string }>('SELECT seq, epoch FROM da_records WHERE run_id = $1 ORDER BY seq', [runId]);
  const run = await pool.query<{ records: number; header: unknown }>('SELECT records, header FROM da_runs WHERE id = $1', [runId]);
  return { seqs: rows.map((r) => r.seq), epochs: [...new Set(rows.map((r) => Number(r.epoch)))], records: run.rows[0]!.records, header: run.rows[0]!.header };
}

describe.skipIf(!postgresAvailable())('several runs to a statement', () => {
  usePostgres({ connections: 8 });

  it("writes several runs' first records and appends in fewer statements than runs, each run's rows and count its own", async () => {
    const batcher = new AppendBatcher(pool);
    const ids = Array.from({ length: 6 }, (_, i) => `many-${i}`);
    const stores = await Promise.all(ids.map((id) => leasedStore(id, batcher)));
    await Promise.all(stores.map((store, i) => store.create({ ...HEADER, runId: ids[i]! }, storeRecord(0))));
    for (let seq = 1; seq <= 5; seq++) await Promise.all(stores.map((store) => store.append(storeRecord(seq))));
    // 6 creates and 30 appends: one statement each before; the batcher sends one per round here.
    expect(batcher.counts.appends).toBe(36);
    expect(batcher.counts.statements).toBeLessThanOrEqual(12);
    for (const id of ids) {
      const rows = await rowsOf(id);
      expect(rows.seqs).toEqual([0, 1, 2, 3, 4, 5]);
      expect(rows.records).toBe(6);
      expect(rows.header).toMatchObject({ runId: id });
      expect(rows.epochs).toHaveLength(1);
    }
    // What each store learnt from the statement it shared: its own count.
    for (const store of stores) expect((await store.load()).records).toHaveLength(6);
  });

  it('fences each run inside the statement: the run whose lease was taken over fails alone, the others land', async () => {
    const batcher = new AppendBatcher(pool);
    const ids = ['fence-a', 'fence-b', 'fence-c'];
    const stores = await Promise.all(ids.map((id) => leasedStore(id, batcher)));
    await Promise.all(stores.map((store, i) => store.create({ ...HEADER, runId: ids[i]! }, storeRecord(0))));
    // Another worker claims fence-b (its lease expired, say): the epoch moves on.
    await pool.query(`UPDATE da_runs SET lease_epoch = lease_epoch + 1, lease_owner = 'other-worker' WHERE id = 'fence-b'`);
    const before = batcher.counts.statements;
    const outcomes = await Promise.allSettled(stores.map((store) => store.append(storeRecord(1))));
    expect(batcher.counts.statements - before).toBe(1);
    expect(outcomes[0]!.status).toBe('fulfilled');
    expect(outcomes[2]!.status).toBe('fulfilled');
    expect(outcomes[1]!.status).toBe('rejected');
    const lost = (outcomes[1] as PromiseRejectedResult).reason as LeaseLostError;
    expect(lost).toBeInstanceOf(LeaseLostError);
    expect(lost.currentOwner).toBe('other-worker');
    expect((await rowsOf('fence-a')).seqs).toEqual([0, 1]);
    expect((await rowsOf('fence-b')).seqs).toEqual([0]);
    expect((await rowsOf('fence-b')).records).toBe(1);
    expect((await rowsOf('fence-c')).seqs).toEqual([0, 1]);
  });

  it('a statement the server refuses is written run by run: the bad write fails alone, as a rolled-back write', async () => {
    const batcher = new AppendBatcher(pool);
    const ids = ['refused-a', 'refused-b', 'refused-c'];
    const stores = await Promise.all(ids.map((id) => leasedStore(id, batcher)));
    await Promise.all(stores.map((store, i) => store.create({ ...HEADER, runId: ids[i]! }, storeRecord(0))));
    // A row in the way of refused-b's next record: the statement carrying it breaks a unique key.
    const { rows } = await pool.query<{ lease_epoch: string }>(`SELECT lease_epoch FROM da_runs WHERE id = 'refused-b'`);
    await pool.query(`INSERT INTO da_records (run_id, seq, epoch, body, bytes) VALUES ('refused-b', 1, $1, '{}', 2)`, [rows[0]!.lease_epoch]);
    const outcomes = await Promise.allSettled(stores.map((store) => store.append(storeRecord(1))));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const error = (outcomes[1] as PromiseRejectedResult).reason as StoreWriteError;
    expect(error).toBeInstanceOf(StoreWriteError);
    // Rolled back, so known not written: the store may go on (unlike a write whose fate is unknown).
    expect(error.outcomeUnknown).toBe(false);
    expect((await rowsOf('refused-a')).seqs).toEqual([0, 1]);
    expect((await rowsOf('refused-c')).seqs).toEqual([0, 1]);
    expect((await rowsOf('refused-b')).records).toBe(1);
  });

  it('refuses a first record on a run that has records, in a statement shared with an append', async () => {
    const batcher = new AppendBatcher(pool);
    const first = await leasedStore('first-twice', batcher);
    await first.create({ ...HEADER, runId: 'first-twice' }, storeRecord(0));
    const other = await leasedStore('first-other', batcher);
    const outcomes = await Promise.allSettled([first.create({ ...HEADER, runId: 'first-twice' }, storeRecord(0)), other.create({ ...HEADER, runId: 'first-other' }, storeRecord(0))]);
    expect(outcomes[0]!.status).toBe('rejected');
    expect(String((outcomes[0] as PromiseRejectedResult).reason.message)).toContain('already has records');
    expect(outcomes[1]!.status).toBe('fulfilled');
    expect((await rowsOf('first-twice')).seqs).toEqual([0]);
  });

  it('claims several runs in one statement, the oldest first, and releases them in one, under their epochs', async () => {
    for (let i = 0; i < 5; i++) await pool.query(`INSERT INTO da_runs (id, spec, created_at) VALUES ($1, '{"kind":"api"}', now() + $2 * interval '1 second')`, [`claim-${i}`, i]);
    const leases = await claimNextRuns(pool, 'worker-1', 60_000, 3);
    expect(leases.map((lease) => lease.runId)).toEqual(['claim-0', 'claim-1', 'claim-2']);
    const rest = await claimNextRuns(pool, 'worker-2', 60_000, 3);
    expect(rest.map((lease) => lease.runId)).toEqual(['claim-3', 'claim-4']);
    // claim-1 was taken over meanwhile: its release must leave the newer lease alone.
    await pool.query(`UPDATE da_runs SET lease_epoch = lease_epoch + 1, lease_owner = 'worker-3' WHERE id = 'claim-1'`);
    await releaseLeases(pool, leases);
    const { rows } = await pool.query<{ id: string; lease_owner: string | null }>(`SELECT id, lease_owner FROM da_runs WHERE id LIKE 'claim-%' ORDER BY id`);
    expect(rows.map((row) => row.lease_owner)).toEqual([null, 'worker-3', null, 'worker-2', 'worker-2']);
  });
});
