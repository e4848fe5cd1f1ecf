/**
 * A person in the loop in a fleet, with real worker and CLI processes on a real PostgreSQL: a
 * submitted run that needs approval waits holding no lease and no worker slot, is decided from
 * another process (approve / deny --run ID), and a worker takes it up and applies the decision
 * exactly once, also when it is SIGKILLed right after recording it.
 */
import { describe, expect, it } from 'vitest';
import { FLEET_DONE_TEXT } from '../../src/fleet/worker.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import type { Lease } from '../../src/store/pg/leases.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { openPool } from '../../src/store/pg/pool.ts';
import { migrate } from '../../src/store/pg/schema.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { toolResultOf, toolUseProblems } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, postgresAvailable, usePostgres, withDb } from '../helpers/use-postgres.ts';

const cli = (args: string[], env?: Record<string, string | undefined>) => runCliAsync(args, { cwd: tempDir(), ...(env ? { env } : {}) });

/** A worker that drives what it can and exits when nothing is left a worker can do. */
const worker = (url: string, env?: Record<string, string | undefined>) =>
  cli(['worker', '--database-url', url, '--lease-ms', '1500', '--poll-ms', '100', '--exit-when-idle'], env);

async function runRow(url: string, id: string) {
  return withDb(url, async (db) => {
    const { rows } = await db.query<{ state: string; lease_owner: string | null; lease_expires_at: Date | null; awaiting: string | null; header: { version: number; decisionPolicy?: unknown } }>(
      'SELECT state, lease_owner, lease_expires_at, awaiting, header FROM da_runs WHERE id = $1',
      [id],
    );
    const audits = await db.query<{ n: string }>('SELECT count(*) AS n FROM demo_report_audit WHERE run_id = $1', [id]);
    const view = foldJournal(id, await new PgRunStore(db, id).load());
    return { ...rows[0]!, audits: Number(audits.rows[0]!.n), view };
  });
}

/** Submits one demo run that needs approval for write_report, and lets a worker drive it until it waits. */
async function waitingRun(url: string, extra: string[] = []): Promise<string> {
  const submitted = await cli(['submit', 'demo', '--database-url', url, '--require-approval', 'write_report', ...extra]);
  expect(submitted.code, submitted.stderr).toBe(0);
  const id = submitted.stdout.trim();
  const driven = await worker(url);
  expect(driven.code, driven.stderr).toBe(0);
  expect(driven.stdout).toContain(`run ${id}: waiting for a person (toolu_03 write_report); lease released`);
  return id;
}

describe.skipIf(!postgresAvailable())('a person in the loop in a fleet', () => {
  usePostgres({ prefix: 'decisions' });

  it('a run submitted with --require-approval waits with no lease, is approved from another process, and a worker finishes it once', async () => {
    const url = await freshDatabase();
    const id = await waitingRun(url);
    const waiting = await runRow(url, id);
    expect(waiting).toMatchObject({ state: 'awaitingDecision', lease_owner: null, lease_expires_at: null, awaiting: 'toolu_03', audits: 0 });
    // The rule is pinned in the run's header (version 2: older releases refuse it rather than run the call unasked).
    expect(waiting.header).toMatchObject({ version: 2, decisionPolicy: { requireApproval: ['write_report'] } });

    // Not claimable while undecided: a worker has nothing to do and exits at once.
    const idle = await worker(url);
    expect(idle.code, idle.stderr).toBe(0);
    expect(idle.stdout).not.toContain(`run ${id}: claimed`);

    const status = await cli(['status', '--database-url', url]);
    expect(status.stdout).toMatch(new RegExp(`${id} +awaitingDecision .*toolu_03 since \\S+`));
    expect(status.stdout).toContain('1 waiting for a person');
    const pending = await cli(['pending', '--database-url', url, '--run', id, '--json']);
    expect(pending.code, pending.stderr).toBe(0);
    expect(JSON.parse(pending.stdout)).toMatchObject([{ runId: expect.any(String), tool_use_id: 'toolu_03', name: 'write_report', needs: 'approval', awaited: true, given: null }]);

    const approved = await cli(['approve', '--run', id, 'toolu_03', '--by', 'ana'], { DURABLE_AGENT_DATABASE_URL: url });
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain('[given] toolu_03 write_report approved by ana');
    const again = await cli(['deny', '--database-url', url, '--run', id, 'toolu_03', '--reason', 'no']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already approved by ana');
    expect((await cli(['status', '--database-url', url])).stdout).toContain('(decided, to be taken up)');

    const finished = await worker(url);
    expect(finished.code, finished.stderr).toBe(0);
    expect(finished.stdout).toContain(`run ${id}: decision toolu_03 write_report: approved by ana`);
    const done = await runRow(url, id);
    expect(done).toMatchObject({ state: 'done', audits: 1 });
    expect(done.view.context.finalText).toBe(FLEET_DONE_TEXT);
    expect(toolUseProblems(done.view.context.messages)).toEqual([]);
    const settled = await withDb(url, (db) => db.query('SELECT settled_at FROM da_decisions WHERE run_id = $1', [id]));
    expect(settled.rows).toHaveLength(1);
    expect(settled.rows[0].settled_at).not.toBeNull();
  });

  it('denied: the report is never stored, the model gets the denial, the run finishes', async () => {
    const url = await freshDatabase();
    const id = await waitingRun(url);
    const denied = await cli(['deny', '--database-url', url, '--run', id, 'toolu_03', '--reason', 'not before Monday']);
    expect(denied.code, denied.stderr).toBe(0);
    expect((await worker(url)).code).toBe(0);
    const done = await runRow(url, id);
    expect(done).toMatchObject({ state: 'done', audits: 0 });
    const result = toolResultOf(done.view.context.messages, 'toolu_03');
    expect(result).toMatchObject({ is_error: true });
    expect(JSON.stringify(result)).toContain('denied by a person: not before Monday');
  });

  it('a worker SIGKILLed right after it recorded the approval: the next worker applies nothing twice', async () => {
    const url = await freshDatabase();
    const id = await waitingRun(url);
    expect((await cli(['approve', '--database-url', url, '--run', id, 'toolu_03'])).code).toBe(0);
    const killed = await worker(url, { CRASH_AFTER: 'after-save-decision:1' });
    expect(killed.signal ?? killed.code).toBe('SIGKILL');
    expect((await runRow(url, id)).audits).toBe(0);
    // The dead worker's lease expires (1.5 s); the next worker takes the run over and finishes it.
    const next = await worker(url);
    expect(next.code, next.stderr).toBe(0);
    const done = await runRow(url, id);
    expect(done).toMatchObject({ state: 'done', audits: 1 });
    const events = await withDb(url, (db) => db.query<{ body: string }>('SELECT body FROM da_records WHERE run_id = $1 ORDER BY seq', [id]));
    expect(events.rows.filter((row) => JSON.parse(row.body).event === 'DECISION')).toHaveLength(1);
  });

  it('a deadline pinned at submit makes a waiting run claimable when it passes: denied by the deadline', async () => {
    const url = await freshDatabase();
    const id = await waitingRun(url, ['--decision-timeout', '2s']);
    expect((await runRow(url, id)).state).toBe('awaitingDecision');
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect((await worker(url)).code).toBe(0);
    const done = await runRow(url, id);
    expect(done).toMatchObject({ state: 'done', audits: 0 });
    expect(JSON.stringify(toolResultOf(done.view.context.messages, 'toolu_03'))).toContain('no decision within 2s');
  });

  it('fencing: a writer whose lease was taken over settles no decision', async () => {
    const url = await freshDatabase();
    const id = await waitingRun(url);
    expect((await cli(['approve', '--database-url', url, '--run', id, 'toolu_03'])).code).toBe(0);
    await withDb(url, async (db) => {
      const stale: Lease = { runId: id, owner: 'stale', epoch: 1 };
      await db.query('UPDATE da_runs SET lease_epoch = 5 WHERE id = $1', [id]);
      await new PgRunStore(db, id, { lease: stale }).decisions.settle('toolu_03');
      const { rows } = await db.query('SELECT settled_at FROM da_decisions WHERE run_id = $1', [id]);
      expect(rows[0].settled_at).toBeNull();
    });
  });

  it('pending --database-url without --run lists the waiting calls of every run of the fleet, each with its run; so does the variable without --dir', async () => {
    const url = await freshDatabase();
    const nothing = await cli(['pending', '--database-url', url]);
    expect(nothing.code, nothing.stderr).toBe(0);
    expect(nothing.stdout.trim()).toBe('Nothing waits for a decision in the runs of the fleet.');
    const first = await waitingRun(url);
    const second = await waitingRun(url);
    const [a, b] = [first, second].sort() as [string, string];

    const pending = await cli(['pending', '--database-url', url]);
    expect(pending.code, pending.stderr).toBe(0);
    const lines = pending.stdout.split('\n');
    expect(lines[0]).toMatch(/^run +call +tool +waits for +since +state +input$/);
    expect(lines[1]).toMatch(new RegExp(`^${a} +toolu_03 +write_report +approval +\\S+ \\(.+ ago\\) +the run waits on it `));
    expect(lines[2]).toMatch(new RegExp(`^${b} +toolu_03 +write_report +approval `));
    expect(pending.stdout).toMatch(new RegExp(`^ {2}approve: .*durable-agent approve --run ${a} toolu_03$`, 'm'));
    const json = JSON.parse((await cli(['pending', '--json'], { DURABLE_AGENT_DATABASE_URL: url })).stdout);
    expect(json).toMatchObject([
      { run: a, tool_use_id: 'toolu_03', name: 'write_report', needs: 'approval', given: null },
      { run: b, tool_use_id: 'toolu_03', name: 'write_report', needs: 'approval', given: null },
    ]);

    // Decided, the call shows as given until a worker takes it up; then it waits no more.
    expect((await cli(['approve', '--database-url', url, '--run', a, 'toolu_03', '--by', 'ana'])).code).toBe(0);
    expect((await cli(['pending', '--database-url', url])).stdout).toMatch(new RegExp(`^${a} +toolu_03 +write_report +approval .* approved by ana, not taken up yet `, 'm'));
    expect((await worker(url)).code).toBe(0);
    const after = await cli(['pending', '--database-url', url, '--json']);
    expect(JSON.parse(after.stdout)).toMatchObject([{ run: b, tool_use_id: 'toolu_03' }]);
  }, 120_000);

  it('refuses --dir with --database-url, --database-url without --run, and a tool the demo lacks at submit', async () => {
    const url = await freshDatabase();
    expect((await cli(['approve', '--dir', '.', '--database-url', url, '--run', 'x', 'toolu_03'])).stderr).toContain('not both');
    // A decision is for one call of one run (pending without --run lists the whole fleet: below).
    expect((await cli(['approve', '--database-url', url, 'toolu_03'])).stderr).toContain('approve --database-url needs --run ID');
    const bad = await cli(['submit', 'demo', '--database-url', url, '--require-approval', 'write_repot']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('write_repot');
  });

  it('migrates a schema at version 1 to 2 (the decisions table), once', async () => {
    const url = await freshDatabase();
    const db = openPool(url, 2);
    try {
      expect(await migrate(db, 1)).toEqual({ from: 0, to: 1 });
      expect(await migrate(db, 2)).toEqual({ from: 1, to: 2 });
      expect(await migrate(db, 2)).toEqual({ from: 2, to: 2 });
      const { rows } = await db.query("SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'da_decisions'");
      expect(rows[0].n).toBe(1);
      // And on to 3 (issue 14): the run's last snapshot record.
      expect(await migrate(db, 3)).toEqual({ from: 2, to: 3 });
      const column = await db.query("SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = 'da_runs' AND column_name = 'snapshot_seq'");
      expect(column.rows[0].n).toBe(1);
    } finally {
      await db.end();
    }
  });
});
