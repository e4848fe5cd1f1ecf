/**
 * `durable-agent prune --database-url` on a real PostgreSQL, the CLI as a process: finished runs
 * go with their records and decisions; queued, waiting and leased runs stay; --dry-run removes
 * nothing; the age is measured by the server's clock.
 */
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/pg/pool.ts';
import { pruneFleetRuns } from '../../src/fleet/prune-fleet.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';

const cli = (args: string[], env?: Record<string, string | undefined>) => runCliAsync(args, { cwd: tempDir(), ...(env ? { env } : {}) });

async function submit(url: string, count: number, extra: string[] = []): Promise<string[]> {
  const submitted = await cli(['submit', 'demo', '--database-url', url, '--count', String(count), ...extra]);
  expect(submitted.code, submitted.stderr).toBe(0);
  return submitted.stdout.trim().split('\n');
}

async function drive(url: string): Promise<void> {
  const driven = await cli(['worker', '--database-url', url, '--lease-ms', '1500', '--poll-ms', '100', '--exit-when-idle', '--concurrency', '4']);
  expect(driven.code, driven.stderr).toBe(0);
}

async function counts(db: pg.Pool, id: string) {
  const { rows } = await db.query<{ runs: string; records: string; decisions: string }>(
    `SELECT (SELECT count(*) FROM da_runs WHERE id = $1) AS runs, (SELECT count(*) FROM da_records WHERE run_id = $1) AS records,
            (SELECT count(*) FROM da_decisions WHERE run_id = $1) AS decisions`,
    [id],
  );
  return { runs: Number(rows[0]!.runs), records: Number(rows[0]!.records), decisions: Number(rows[0]!.decisions) };
}

describe.skipIf(!postgresAvailable())('durable-agent prune on a fleet', () => {
  usePostgres({ prefix: 'prune' });

  it('removes finished runs with their records and decisions; queued, waiting and leased runs stay', async () => {
    const url = await freshDatabase();
    const db = await openDatabase(url, 3);
    try {
      const done = await submit(url, 3);
      const decided = await submit(url, 1, ['--require-approval', 'write_report']);
      await drive(url);
      const approved = await cli(['approve', '--database-url', url, '--run', decided[0]!, 'toolu_03']);
      expect(approved.code, approved.stderr).toBe(0);
      await drive(url);
      const waiting = await submit(url, 1, ['--require-approval', 'write_report']);
      await drive(url);
      const queued = await submit(url, 1);
      // A finished run whose worker died before releasing its lease: held until the lease runs out.
      const leased = done[2]!;
      await db.query(`UPDATE da_runs SET lease_owner = 'w:1', lease_expires_at = now() + interval '1 hour' WHERE id = $1`, [leased]);
      expect(await counts(db, decided[0]!)).toMatchObject({ runs: 1, decisions: 1 });

      const dry = await cli(['prune', '--database-url', url, '--older-than', '0s', '--dry-run']);
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stdout).toMatch(/would remove 3 finished runs, [\d.]+ kB \(dry run: nothing was removed\)/);
      expect(await counts(db, done[0]!)).toMatchObject({ runs: 1 });

      const pruned = await cli(['prune', '--older-than', '0s'], { DURABLE_AGENT_DATABASE_URL: url });
      expect(pruned.code, pruned.stderr).toBe(0);
      for (const id of [done[0]!, done[1]!, decided[0]!]) {
        expect(pruned.stdout).toMatch(new RegExp(`removed +${id} +done +\\S+Z +[\\d.]+ kB +\\d+ records, \\d decisions`));
        expect(await counts(db, id)).toEqual({ runs: 0, records: 0, decisions: 0 });
      }
      expect(pruned.stdout).toMatch(/removed 3 finished runs, [\d.]+ kB/);
      for (const id of [leased, waiting[0]!, queued[0]!]) expect((await counts(db, id)).runs).toBe(1);
      const { rows } = await db.query<{ id: string; state: string }>('SELECT id, state FROM da_runs WHERE id = ANY($1) ORDER BY state', [[waiting[0], queued[0]]]);
      expect(rows.map((row) => row.state).sort()).toEqual(['awaitingDecision', 'queued']);
      // What the tools wrote to the outside world is not the run's record: it stays.
      const reports = await db.query('SELECT 1 FROM demo_reports WHERE run_id = $1', [done[0]]);
      expect(reports.rowCount).toBe(1);
    } finally {
      await db.end();
    }
  });

  it('--keep and --older-than by the server clock; bad input exits 2 and removes nothing', async () => {
    const url = await freshDatabase();
    const db = await openDatabase(url, 3);
    try {
      const ids = await submit(url, 3);
      await drive(url);
      expect((await pruneFleetRuns(db, { olderThanMs: 86_400_000, dryRun: true })).removed).toEqual([]);
      await db.query(`UPDATE da_runs SET updated_at = now() - interval '2 days' WHERE id = $1`, [ids[0]]);
      const week = await cli(['prune', '--database-url', url, '--older-than', '1d']);
      expect(week.code, week.stderr).toBe(0);
      expect(week.stdout).toMatch(/removed 1 finished run,/);
      expect((await counts(db, ids[0]!)).runs).toBe(0);
      for (const args of [['prune', '--database-url', url], ['prune', '--database-url', url, '--keep', 'x'], ['prune', '--database-url', url, '--older-than', '2w']]) {
        const refused = await cli(args);
        expect(refused.code, args.join(' ')).toBe(2);
      }
      const kept = await cli(['prune', '--database-url', url, '--keep', '1']);
      expect(kept.code, kept.stderr).toBe(0);
      expect(kept.stdout).toMatch(/removed 1 finished run,/);
      const left = await db.query('SELECT id FROM da_runs');
      expect(left.rowCount).toBe(1);
    } finally {
      await db.end();
    }
  });
});
