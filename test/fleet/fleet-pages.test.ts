/**
 * A fleet of many runs read a page at a time: the schema's step 13 (indexes, the finished runs
 * counted by state as they finish) taken by a database of the step before with its runs kept,
 * and the pages of list (the queue's order, --limit and --after) and of the console (newest save
 * first, ?after=) giving every run exactly once while runs are added between two pages.
 */
import { describe, expect, it } from 'vitest';
import { fleetCounts } from '../../src/console/fleet-rows.ts';
import { pruneFleetInBatches } from '../../src/fleet/prune-fleet.ts';
import { removeFinishedBatch } from '../../src/store/pg/prune-rows.ts';
import { RunSources } from '../../src/console/run-sources.ts';
import { ListCursorError } from '../../src/runtime/list-errors.ts';
import { listRuns, submitRuns } from '../../src/postgres.ts';
import { openPool } from '../../src/store/pg/pool.ts';
import { migrate, SCHEMA_VERSION } from '../../src/store/pg/schema.ts';
import { openDatabase } from '../../src/store/pg/pool.ts';
import { freshDatabase, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';

const SPEC = { kind: 'demo', model: null, maxTurns: 20, paceMs: 0, jitterMs: 0 } as const;

describe.skipIf(!postgresAvailable())('a fleet read a page at a time', () => {
  usePostgres({ connections: 2 });

  it('a database of schema 12 takes step 13 with its runs and records kept, and counts its finished runs from then on', async () => {
    const pool = openPool(await freshDatabase('pages_migrate'), 4);
    try {
      expect(await migrate(pool, 12)).toEqual({ from: 0, to: 12 });
      await pool.query(
        `INSERT INTO da_runs (id, spec, state, finished) VALUES
           ('done-1', '{"kind":"demo"}', 'done', true), ('done-2', '{"kind":"demo"}', 'done', true),
           ('failed-1', '{"kind":"demo"}', 'failed', true), ('queued-1', '{"kind":"demo"}', 'queued', false),
           ('old~archived~1', '{"kind":"demo"}', 'done', true)`,
      );
      await pool.query(`INSERT INTO da_records (run_id, seq, epoch, body, bytes) VALUES ('done-1', 0, 1, '{"a":1}', 7), ('done-1', 1, 1, '{"b":2}', 7)`);
      expect(await migrate(pool)).toEqual({ from: 12, to: SCHEMA_VERSION });
      // Steps 14 (schedules), 15 (tenants), 16 (tenant quotas and rate limits), 17 (sealed runs' keys) and 18 (sealed schedules' keys) come after it.
      expect(SCHEMA_VERSION).toBe(18);
      const { rows } = await pool.query<{ id: string; state: string; records: string }>(
        `SELECT id, state, (SELECT count(*) FROM da_records r WHERE r.run_id = da_runs.id) AS records FROM da_runs ORDER BY id`,
      );
      expect(rows).toEqual([
        { id: 'done-1', state: 'done', records: '2' },
        { id: 'done-2', state: 'done', records: '0' },
        { id: 'failed-1', state: 'failed', records: '0' },
        { id: 'old~archived~1', state: 'done', records: '0' },
        { id: 'queued-1', state: 'queued', records: '0' },
      ]);
      expect(await fleetCounts(pool)).toMatchObject({ done: 2, failed: 1, running: 1, cancelled: 0 });
      // Kept as runs finish, change, are archived and are removed.
      await pool.query(`UPDATE da_runs SET state = 'cancelled', finished = true WHERE id = 'queued-1'`);
      await pool.query(`UPDATE da_runs SET id = 'done-2~archived~x' WHERE id = 'done-2'`);
      await pool.query(`DELETE FROM da_runs WHERE id = 'failed-1'`);
      expect(await fleetCounts(pool)).toMatchObject({ done: 1, failed: 0, running: 0, cancelled: 1 });
    } finally {
      await pool.end();
    }
  });

  it("list's pages in the queue's order give every run once, the runs queued between two pages at the end", async () => {
    const pool = await openDatabase(await freshDatabase('pages_list'), 4);
    try {
      await submitRuns(pool, SPEC, 23);
      const seen: string[] = [];
      let after: string | undefined;
      for (let page = 0; ; page++) {
        const runs = await listRuns(pool, { limit: 5, after });
        if (runs.length === 0) break;
        seen.push(...runs.map((run) => run.runId));
        after = runs[runs.length - 1]!.runId;
        if (page < 4) await submitRuns(pool, SPEC, 2);
      }
      const all = (await listRuns(pool)).map((run) => run.runId);
      expect(all).toHaveLength(31);
      expect(seen).toEqual(all);
      await expect(listRuns(pool, { limit: 5, after: 'no-such-run' })).rejects.toBeInstanceOf(ListCursorError);
    } finally {
      await pool.end();
    }
  });

  it("the console's pages, newest save first from a cursor, give every run once while runs are added, saves of one millisecond too", async () => {
    const pool = await openDatabase(await freshDatabase('pages_console'), 4);
    const sources = new RunSources([], pool);
    try {
      const ids = await submitRuns(pool, SPEC, 23);
      // Saves a few microseconds apart fall in one millisecond: the database orders them one way, the console another.
      await pool.query(
        `UPDATE da_runs SET updated_at = timestamptz '2026-01-01 00:00:00Z' + (n / 4) * interval '1 millisecond' + (23 - n) * interval '1 microsecond'
           FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM da_runs) AS o WHERE o.id = da_runs.id`,
      );
      const seen: string[] = [];
      let after: { updatedAt: number; key: string } | undefined;
      for (let page = 0; page < 20; page++) {
        const list = await sources.list({ limit: 5, after });
        seen.push(...list.rows.map((row) => row.runId));
        if (!list.more) break;
        const last = list.rows[list.rows.length - 1]!;
        after = { updatedAt: last.updatedAt ?? 0, key: last.key };
        // Runs queued now are saved now, before every row already shown: the pages after the cursor never show them.
        await submitRuns(pool, SPEC, 2);
      }
      expect(new Set(seen).size).toBe(seen.length);
      expect([...seen].sort()).toEqual([...ids].sort());
      const first = await sources.list({ limit: 5 });
      expect(first).toMatchObject({ total: 23 + 2 * 4, matching: 23 + 2 * 4, more: true });
      expect(first.counts.running).toBe(31);
    } finally {
      await sources.close();
      await pool.end();
    }
  });

  it('retention removes the finished runs older than an age in batches, oldest first, and a prune stopped after a batch goes on when run again', async () => {
    const pool = await openDatabase(await freshDatabase('pages_retention'), 4);
    try {
      await pool.query(
        `INSERT INTO da_runs (id, spec, state, finished, updated_at)
         SELECT 'old-' || lpad(n::text, 2, '0'), '{"kind":"demo"}', CASE WHEN n % 3 = 0 THEN 'failed' ELSE 'done' END, true, now() - interval '40 days' + n * interval '1 hour'
           FROM generate_series(1, 12) AS n`,
      );
      await pool.query(
        `INSERT INTO da_runs (id, spec, state, finished, updated_at) VALUES
           ('recent', '{"kind":"demo"}', 'done', true, now() - interval '1 day'),
           ('stopped-old', '{"kind":"demo"}', 'stoppedAtMaxTurns', false, now() - interval '60 days'),
           ('queued-old', '{"kind":"demo"}', 'queued', false, now() - interval '60 days'),
           ('leased-old', '{"kind":"demo"}', 'done', true, now() - interval '60 days')`,
      );
      await pool.query(`UPDATE da_runs SET lease_owner = 'w', lease_expires_at = now() + interval '1 hour' WHERE id = 'leased-old'`);
      await pool.query(`INSERT INTO da_records (run_id, seq, epoch, body, bytes) SELECT id, 0, 1, '{}', 2 FROM da_runs`);
      const month = 30 * 24 * 3600 * 1000;
      // A prune killed after its first batch: that batch is gone whole, the rest is there.
      expect(await removeFinishedBatch(pool, { olderThanMs: month, keep: null }, 5)).toEqual(['old-01', 'old-02', 'old-03', 'old-04', 'old-05']);
      const batches: string[][] = [];
      expect(await pruneFleetInBatches(pool, { olderThanMs: month }, { batch: 5, onBatch: (ids) => batches.push([...ids]) })).toBe(7);
      expect(batches.map((ids) => ids.length)).toEqual([5, 2]);
      const { rows } = await pool.query<{ id: string }>('SELECT id FROM da_runs ORDER BY id');
      expect(rows.map((row) => row.id)).toEqual(['leased-old', 'queued-old', 'recent', 'stopped-old']);
      expect((await pool.query('SELECT DISTINCT run_id FROM da_records')).rowCount).toBe(4);
      expect(await fleetCounts(pool)).toMatchObject({ done: 2, failed: 0 });
      // --keep in batches: the newest finished run stays, whatever its age.
      expect(await pruneFleetInBatches(pool, { keep: 1 }, { batch: 1 })).toBe(0);
      await pool.query(`UPDATE da_runs SET lease_owner = NULL, lease_expires_at = NULL WHERE id = 'leased-old'`);
      expect(await pruneFleetInBatches(pool, { keep: 1 }, { batch: 1 })).toBe(1);
      expect((await pool.query<{ id: string }>('SELECT id FROM da_runs WHERE finished')).rows.map((row) => row.id)).toEqual(['recent']);
    } finally {
      await pool.end();
    }
  });
});
