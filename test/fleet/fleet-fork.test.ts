/**
 * `durable-agent fork --database-url --run` on a real PostgreSQL, the CLI as processes: a fleet
 * run forked at an open turn into a new fleet run that a worker takes up; the side effect the
 * parent did after the fork point is listed, and the child's resume does not reuse it: it
 * checks it under its own idempotency key (demo_reports tells the branches apart). The parent's
 * rows are not changed; lineage shows in fleet status; refusals exit 2 and write nothing.
 */
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/pg/pool.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { pool, postgresAvailable, server, usePostgres } from '../helpers/use-postgres.ts';

const cli = (args: string[]) => runCliAsync(args, { cwd: tempDir() });

async function parentRows(db: pg.Pool, id: string) {
  const run = await db.query('SELECT id, spec, header, state, turn, records, finished FROM da_runs WHERE id = $1', [id]);
  const records = await db.query('SELECT seq, epoch, body, bytes FROM da_records WHERE run_id = $1 ORDER BY seq', [id]);
  return { run: run.rows, records: records.rows as Array<{ seq: number; body: string }> };
}

describe.skipIf(!postgresAvailable())('durable-agent fork on a fleet', () => {
  usePostgres();

  it('forks a finished run at its open write_report: listed, taken up by a worker, checked under its own key; the parent unchanged', async () => {
    await pool.query('CREATE DATABASE fork_1');
    const url = server.url.replace(/\/postgres$/, '/fork_1');
    const db = await openDatabase(url, 3);
    try {
      const submitted = await cli(['submit', 'demo', '--database-url', url]);
      expect(submitted.code, submitted.stderr).toBe(0);
      const parent = submitted.stdout.trim();
      const drive = async () => {
        const worker = await cli(['worker', '--database-url', url, '--lease-ms', '1500', '--poll-ms', '100', '--exit-when-idle']);
        expect(worker.code, worker.stderr).toBe(0);
        return worker.stdout;
      };
      await drive();
      const before = await parentRows(db, parent);
      const at = before.records.filter((r) => /"state":"pendingTool","event":"MODEL_REPLY"/.test(r.body))[2]!.seq;

      const fork = await cli(['fork', '--database-url', url, '--run', parent, '--at', String(at), '--to-run', 'child-1']);
      expect(fork.code, fork.stderr).toBe(0);
      expect(fork.stdout).toContain(`forked fleet run ${parent} at record ${at} of 0-${before.records.length - 1} into fleet run child-1`);
      expect(fork.stdout).toMatch(/toolu_03\s+write_report\s+SIDE EFFECT\s+ran; open in the new run/);
      expect(fork.stdout).toContain('a worker takes it up');
      const status = await cli(['status', '--database-url', url]);
      expect(status.stdout).toMatch(new RegExp(`child-1\\s+pendingTool.*${parent} at record ${at}`));

      const log = await drive();
      expect(log).toMatch(/run child-1: reconcile toolu_03 write_report: verified-not-done-ran/);
      expect(log).toMatch(/run child-1: done/);
      const reports = await db.query<{ idempotency_key: string; run_id: string }>('SELECT idempotency_key, run_id FROM demo_reports ORDER BY written_at');
      expect(reports.rows.map((row) => row.run_id)).toEqual([parent, 'child-1']);
      expect(reports.rows[0]!.idempotency_key).not.toBe(reports.rows[1]!.idempotency_key);
      expect(await parentRows(db, parent)).toEqual(before);

      const child = await db.query<{ header: { runId: string; forkedFrom: { runId: string; fleetRun: string; seq: number } } }>('SELECT header FROM da_runs WHERE id = $1', ['child-1']);
      const parentHeader = before.run[0].header as { runId: string };
      expect(child.rows[0]!.header.forkedFrom).toMatchObject({ runId: parentHeader.runId, fleetRun: parent, seq: at });
      expect(child.rows[0]!.header.runId).not.toBe(parentHeader.runId);

      const more = await cli(['fork', '--database-url', url, '--run', parent, '--to-run', 'child-2', '--message', 'Anything else?']);
      expect(more.code, more.stderr).toBe(0);
      expect(more.stdout).toContain('state awaitingModel');
      expect(await drive()).toMatch(/run child-2: done: You said: "Anything else\?"/);

      for (const [args, message] of [
        [['--to-run', 'child-1'], /a fleet run child-1 already exists/],
        [['--at', '999', '--to-run', 'child-3'], /record 999 does not exist: the run has records 0 to \d+/],
        [['--to-run', parent], /the fork would go where the run is/],
        [['--at', String(at), '--message', 'hi', '--to-run', 'child-3'], /is not a finished conversation/],
      ] as Array<[string[], RegExp]>) {
        const refused = await cli(['fork', '--database-url', url, '--run', parent, ...args]);
        expect(refused.code, refused.stderr).toBe(2);
        expect(refused.stderr).toMatch(message);
      }
      const runs = await db.query('SELECT id FROM da_runs ORDER BY id');
      expect(runs.rows.map((row: { id: string }) => row.id).sort()).toEqual([parent, 'child-1', 'child-2'].sort());
      expect(await parentRows(db, parent)).toEqual(before);
    } finally {
      await db.end();
    }
  });
});
