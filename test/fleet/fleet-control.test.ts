/**
 * cancel and pause of fleet runs (--run ID), with real worker and CLI processes on a real
 * PostgreSQL: the worker holding the lease honours them at its next step; a paused run is not
 * claimed until `resume --run`; a run no worker drives is cancelled by the command itself; a cancel
 * asked while a worker compacts, taken by the next worker in compacting; a worker whose lease was
 * taken writes nothing; and the schema's migration 2 → 3.
 */
import { describe, expect, it, vi } from 'vitest';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { openPool } from '../../src/store/pg/pool.ts';
import { migrate } from '../../src/store/pg/schema.ts';
import { runCliAsync, startCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, postgresAvailable, usePostgres, withDb } from '../helpers/use-postgres.ts';

const cli = (args: string[], env?: Record<string, string | undefined>) => runCliAsync(args, { cwd: tempDir(), ...(env ? { env } : {}) });
const workerArgs = (url: string, leaseMs = 1500) => ['worker', '--database-url', url, '--lease-ms', String(leaseMs), '--poll-ms', '100', '--exit-when-idle'];

async function runRow(url: string, id: string) {
  return withDb(url, async (db) => {
    const { rows } = await db.query<{ state: string; finished: boolean; lease_owner: string | null }>('SELECT state, finished, lease_owner FROM da_runs WHERE id = $1', [id]);
    const controls = await db.query<{ kind: string }>('SELECT kind FROM da_controls WHERE run_id = $1', [id]);
    const view = foldJournal(id, await new PgRunStore(db, id).load());
    return { ...rows[0]!, controls: controls.rows.map((row) => row.kind), view };
  });
}

async function submit(url: string, extra: string[] = []): Promise<string> {
  const submitted = await cli(['submit', 'demo', '--database-url', url, ...extra]);
  expect(submitted.code, submitted.stderr).toBe(0);
  return submitted.stdout.trim();
}

/**
 * Starts a worker and resolves once it drives the run (its output says so). Its lease is the
 * given one: a command that asks the holder must find it held, and on a loaded machine a
 * worker's heartbeat may come later than a short lease allows.
 */
async function drivingWorker(url: string, id: string, leaseMs = 1500) {
  const worker = startCli(workerArgs(url, leaseMs), { cwd: tempDir() });
  await vi.waitFor(async () => expect((await runRow(url, id)).view.context.turn, `the worker never drove ${id}: ${worker.output()}`).toBeTruthy(), { timeout: 30_000, interval: 50 });
  return worker;
}

describe.skipIf(!postgresAvailable())('cancel and pause in a fleet', () => {
  usePostgres({ prefix: 'control' });

  it('cancel --run: the worker holding the lease ends the run as cancelled at its next step', async () => {
    const url = await freshDatabase();
    // A step long enough for the cancel command to start and ask, even on a loaded machine.
    const id = await submit(url, ['--pace', '1500']);
    const worker = await drivingWorker(url, id, 60_000);
    const asked = await cli(['cancel', '--database-url', url, '--run', id, '--by', 'ana', '--reason', 'wrong task']);
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toContain('Cancel asked by ana');
    const ended = await worker.done;
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.stdout).toContain(`run ${id}: cancelled by ana`);
    const row = await runRow(url, id);
    expect(row).toMatchObject({ state: 'cancelled', finished: true, lease_owner: null, controls: [] });
    expect(row.view.context.cancellation).toMatchObject({ by: 'ana', reason: 'wrong task' });
    const again = await cli(['cancel', '--database-url', url, '--run', id]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('is finished (cancelled by ana');
  });

  it('pause --run: the worker stops the run and lets it go; no worker claims it until resume --run; then a worker finishes it', async () => {
    const url = await freshDatabase();
    const id = await submit(url, ['--pace', '1500']);
    const worker = await drivingWorker(url, id, 60_000);
    const asked = await cli(['pause', '--database-url', url, '--run', id, '--by', 'bo']);
    expect(asked.code, asked.stderr).toBe(0);
    const ended = await worker.done;
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.stdout).toContain(`run ${id}: paused by bo`);
    const paused = await runRow(url, id);
    expect(paused.finished).toBe(false);
    expect(paused.controls).toEqual(['pause']);
    const status = await cli(['status', '--database-url', url]);
    expect(status.stdout).toMatch(new RegExp(`${id} +\\w+ \\(paused by bo\\)`));
    expect(status.stdout).toContain('1 paused (unpause --run ID');
    const idle = await cli(workerArgs(url));
    expect(idle.code, idle.stderr).toBe(0);
    expect(idle.stdout).not.toContain(`run ${id}: claimed`);
    const resumed = await cli(['resume', '--database-url', url, '--run', id]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('is cleared');
    const finished = await cli(workerArgs(url));
    expect(finished.stdout).toContain(`run ${id}: claimed`);
    expect(await runRow(url, id)).toMatchObject({ state: 'done', controls: [] });
  });

  it('a run no worker drives (it waits for a person) is cancelled by the cancel command itself; a paused-not-running run is refused', async () => {
    const url = await freshDatabase();
    const id = await submit(url, ['--require-approval', 'write_report']);
    expect((await cli(workerArgs(url))).code).toBe(0);
    expect((await runRow(url, id)).state).toBe('awaitingDecision');
    const pause = await cli(['pause', '--database-url', url, '--run', id]);
    expect(pause.code).toBe(2);
    expect(pause.stderr).toContain('Nothing to pause');
    const asked = await cli(['cancel', '--database-url', url, '--run', id, '--by', 'cy']);
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toContain('[cancelled]');
    expect(await runRow(url, id)).toMatchObject({ state: 'cancelled', finished: true, lease_owner: null, controls: [] });
  });

  it('a queued run no worker has started: the cancel waits in its inbox, and the worker that takes it up ends it before its first model call', async () => {
    const url = await freshDatabase();
    const id = await submit(url);
    const asked = await cli(['cancel', '--database-url', url, '--run', id, '--by', 'ed', '--reason', 'not needed']);
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toContain('which no worker has started yet');
    const ran = await cli(workerArgs(url));
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`run ${id}: cancelled by ed`);
    const row = await runRow(url, id);
    expect(row).toMatchObject({ state: 'cancelled', finished: true, lease_owner: null, controls: [] });
    expect(row.view.context.cancellation).toMatchObject({ by: 'ed', reason: 'not needed' });
    // Nothing of it ran: the model was never asked.
    expect(row.view.context.messages).toHaveLength(1);
    expect(row.view.context.usage.output).toBe(0);
  });

  it('a queued run no worker has started: pause --run keeps every worker off it, resume --run lets one start and finish it', async () => {
    const url = await freshDatabase();
    const id = await submit(url);
    const paused = await cli(['pause', '--database-url', url, '--run', id, '--by', 'ed']);
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toContain('which no worker has started yet');
    expect(paused.stdout).not.toContain('No run is stored');
    const idle = await cli(workerArgs(url));
    expect(idle.code, idle.stderr).toBe(0);
    expect(await withDb(url, async (db) => (await db.query('SELECT 1 FROM da_records WHERE run_id = $1', [id])).rowCount)).toBe(0);
    const resumed = await cli(['resume', '--database-url', url, '--run', id]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain(`the pause of fleet run ${id} (by ed`);
    expect((await cli(workerArgs(url))).code).toBe(0);
    expect(await runRow(url, id)).toMatchObject({ state: 'done', finished: true, controls: [] });
  });

  it('cancel --run asked while a worker compacts the run, the worker killed there: the next worker takes the cancel in compacting', async () => {
    const url = await freshDatabase();
    // The demo's first close passes the trigger of this window; each model call (the summary's too) takes the pace.
    const id = await submit(url, ['--pace', '1500', '--compact', 'client', '--context-window', '1000', '--compact-trigger', '0.3']);
    // A lease the frozen worker still holds when the cancel is asked, even on a loaded machine: the cancel is only asked.
    const lease = 6_000;
    const worker = startCli(['worker', '--database-url', url, '--lease-ms', String(lease), '--poll-ms', '100', '--exit-when-idle'], { cwd: tempDir() });
    const deadline = Date.now() + 30_000;
    while ((await runRow(url, id).catch(() => null))?.state !== 'compacting') {
      if (Date.now() > deadline) throw new Error(`the worker never compacted ${id}: ${worker.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    worker.child.kill('SIGSTOP');
    const asked = await cli(['cancel', '--database-url', url, '--run', id, '--by', 'ana', '--reason', 'too long']);
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toContain('Cancel asked by ana');
    worker.child.kill('SIGKILL');
    await worker.done;
    expect(await runRow(url, id)).toMatchObject({ state: 'compacting', controls: ['cancel'] });
    // Once the killed worker's lease has run out, the next worker claims the run and applies the cancel before anything else.
    await new Promise((resolve) => setTimeout(resolve, lease + 500));
    const next = await cli(workerArgs(url));
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toContain(`run ${id}: cancelled by ana`);
    const row = await runRow(url, id);
    expect(row).toMatchObject({ state: 'cancelled', finished: true, lease_owner: null, controls: [] });
    expect(row.view.context.cancellation).toMatchObject({ by: 'ana', reason: 'too long' });
    const records = await withDb(url, async (db) => (await new PgRunStore(db, id).load()).records.map((stored) => stored.record));
    expect(records.slice(-2).map((record) => [record.event, record.state])).toEqual([
      ['COMPACT', 'compacting'],
      ['CANCEL', 'cancelled'],
    ]);
  }, 60_000);

  it('a worker whose lease was taken writes nothing, not even a cancel', async () => {
    const url = await freshDatabase();
    const id = await submit(url, ['--pace', '400']);
    const worker = await drivingWorker(url, id);
    worker.child.kill('SIGSTOP');
    // The frozen worker's lease expires; the cancel command takes the run and cancels it.
    await new Promise((resolve) => setTimeout(resolve, 1_800));
    const asked = await cli(['cancel', '--database-url', url, '--run', id, '--by', 'di']);
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toContain('[cancelled]');
    const records = (await runRow(url, id)).view;
    worker.child.kill('SIGCONT');
    const ended = await worker.done;
    expect(ended.stdout).toContain('fenced off');
    const after = await runRow(url, id);
    expect(after.state).toBe('cancelled');
    expect(after.view.context.messages).toEqual(records.context.messages);
  });

  it('migrates a schema at version 3 to 4 (the control table), once', async () => {
    const url = await freshDatabase();
    const db = openPool(url, 2);
    try {
      expect(await migrate(db, 3)).toEqual({ from: 0, to: 3 });
      expect(await migrate(db, 4)).toEqual({ from: 3, to: 4 });
      expect(await migrate(db, 4)).toEqual({ from: 4, to: 4 });
      const { rows } = await db.query("SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'da_controls'");
      expect(rows[0].n).toBe(1);
    } finally {
      await db.end();
    }
  });
});
