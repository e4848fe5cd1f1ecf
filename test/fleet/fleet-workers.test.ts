/**
 * A fleet on a real PostgreSQL server, with real worker processes: killed at random and
 * restarted, frozen past their lease, shut down with SIGTERM, and the server itself restarted
 * mid-run. Every run must end done, with no side effect executed twice and no run written by a
 * stale lease after a newer one took over.
 */
import { describe, expect, it, vi } from 'vitest';
import { FLEET_DONE_TEXT } from '../../src/fleet/worker.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { SCHEMA_VERSION } from '../../src/store/pg/schema.ts';
import { runCliAsync, startCli } from '../helpers/cli.ts';
import { toolUseProblems } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, postgresAvailable, server, usePostgres, withDb } from '../helpers/use-postgres.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function cli(args: string[]) {
  return runCliAsync(args, { cwd: tempDir() });
}

/** A worker with a short lease unless `extra` sets one (an option may be given only once). */
function worker(url: string, extra: string[] = []) {
  const lease = extra.includes('--lease-ms') ? [] : ['--lease-ms', '1500'];
  return startCli(['worker', '--database-url', url, ...lease, '--poll-ms', '100', ...extra], { cwd: tempDir() });
}

/** The fleet's promises, checked in the database. */
async function expectAllDoneOnce(url: string, runs: number): Promise<void> {
  await withDb(url, async (db) => {
    const states = await db.query<{ state: string; n: string }>('SELECT state, count(*) AS n FROM da_runs GROUP BY state');
    expect(states.rows.map((r) => [r.state, Number(r.n)])).toEqual([['done', runs]]);
    // One real execution of write_report per call, and one stored report per run.
    const audits = await db.query<{ idempotency_key: string; n: string }>('SELECT idempotency_key, count(*) AS n FROM demo_report_audit GROUP BY idempotency_key');
    expect(audits.rows.filter((r) => Number(r.n) !== 1)).toEqual([]);
    expect(audits.rows).toHaveLength(runs);
    expect(Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM demo_reports')).rows[0]!.n)).toBe(runs);
    // No run was written by two leases at once: along each run's records the lease epoch never goes back.
    const records = await db.query<{ run_id: string; seq: number; epoch: string }>('SELECT run_id, seq, epoch FROM da_records ORDER BY run_id, seq');
    const lastEpoch = new Map<string, number>();
    for (const row of records.rows) {
      expect(Number(row.epoch), `run ${row.run_id} record ${row.seq}`).toBeGreaterThanOrEqual(lastEpoch.get(row.run_id) ?? 0);
      lastEpoch.set(row.run_id, Number(row.epoch));
    }
    // And every conversation is one the Messages API accepts.
    const ids = await db.query<{ id: string }>('SELECT id FROM da_runs');
    for (const { id } of ids.rows) {
      const store = new PgRunStore(db, id);
      const view = foldJournal(store.location, await store.load());
      expect(view.state).toBe('done');
      expect(view.context.finalText).toBe(FLEET_DONE_TEXT);
      expect(toolUseProblems(view.context.messages)).toEqual([]);
    }
  });
}

async function runStates(url: string): Promise<Array<{ id: string; state: string }>> {
  const status = await cli(['status', '--database-url', url, '--json']);
  expect(status.code, status.stderr).toBe(0);
  return JSON.parse(status.stdout);
}

describe.skipIf(!postgresAvailable())('a fleet of workers on PostgreSQL', () => {
  usePostgres();

  it('lets a program drive a run on PostgreSQL through durable-agent/postgres, and a second driver is refused', async () => {
    const url = await freshDatabase('api');
    const { PgRunStore: Store, openDatabase: open } = await import('durable-agent/postgres');
    const { startRun, resumeRun } = await import('durable-agent');
    const { RunLockedError } = await import('durable-agent/errors');
    const { scriptedModel, toolUseReply, endTurnReply, SimulatedCrash } = await import('durable-agent/testing');
    const db = await open(url, 4);
    try {
      const model = () => scriptedModel([toolUseReply([{ id: 'c1', name: 'noop', input: {} }]), endTurnReply('done by the API')]);
      const noop = { name: 'noop', description: 'does nothing', inputSchema: { type: 'object' }, readOnly: true, run: () => 'ok' };
      await expect(startRun({ store: new Store(db, 'api-run'), model: model(), tools: [noop], task: 't', crashAfter: 'after-save-a:1' })).rejects.toThrow(SimulatedCrash);
      const holder = new Store(db, 'api-run');
      const lock = await holder.lock();
      await expect(resumeRun({ store: new Store(db, 'api-run'), model: model(), tools: [noop] })).rejects.toThrow(RunLockedError);
      await lock.release();
      expect(await resumeRun({ store: new Store(db, 'api-run'), model: model(), tools: [noop] })).toMatchObject({ status: 'done', text: 'done by the API' });
    } finally {
      await db.end();
    }
  });

  it('migrates the schema once, queues runs, and lists them as JSON with id and state', async () => {
    const url = await freshDatabase('queue');
    const first = await cli(['db', 'migrate', '--database-url', url]);
    expect(first.stdout).toContain(`migrated from version 0 to ${SCHEMA_VERSION}`);
    expect((await cli(['db', 'migrate', '--database-url', url])).stdout).toContain(`is at version ${SCHEMA_VERSION}: nothing to do`);
    const submitted = await cli(['submit', 'demo', '--database-url', url, '--count', '3']);
    expect(submitted.code, submitted.stderr).toBe(0);
    const ids = submitted.stdout.trim().split('\n');
    expect(ids).toHaveLength(3);
    const states = await runStates(url);
    expect(states.map((r) => [r.id, r.state])).toEqual(ids.map((id) => [id, 'queued']));
    const done = await runCliAsync(['worker', '--database-url', url, '--exit-when-idle', '--concurrency', '2'], { cwd: tempDir() });
    expect(done.code, done.stderr).toBe(0);
    expect((await runStates(url)).map((r) => r.state)).toEqual(['done', 'done', 'done']);
    await expectAllDoneOnce(url, 3);
  });

  it('3 workers, 30 runs, workers SIGKILLed at random moments and restarted: every run done, nothing twice', async () => {
    const url = await freshDatabase('chaos');
    // Paced so that the runs outlast the kills whatever the machine's speed: each run's 9 or so paced
    // steps take at least 2.7 s, 30 runs in 9 slots at least 10.8 s, and five kills at most about 5.5 s.
    expect((await cli(['submit', 'demo', '--database-url', url, '--count', '30', '--pace', '300', '--jitter', '100'])).code).toBe(0);
    const seed = Number(process.env.KILL_SEED ?? Math.floor(Math.random() * 1e9));
    let state = seed >>> 0;
    const random = () => ((state = (Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x9e3779b9) >>> 0) / 4294967296);
    console.log(`[fleet chaos] seed=${seed} (replay with KILL_SEED=${seed})`);
    const workers = [0, 1, 2].map(() => worker(url, ['--concurrency', '3']));
    let kills = 0;
    const allDone = async () => (await withDb(url, (db) => db.query('SELECT 1 FROM da_runs WHERE NOT finished'))).rowCount === 0;
    try {
      await vi.waitFor(async () => expect((await withDb(url, (db) => db.query('SELECT 1 FROM da_records LIMIT 1'))).rowCount === 1, 'the first claims').toBe(true), { timeout: 60_000, interval: 50 });
      while (kills < 10 && !(await allDone())) {
        await sleep(300 + random() * 700);
        const victim = Math.floor(random() * workers.length);
        workers[victim]!.child.kill('SIGKILL');
        await workers[victim]!.done;
        kills += 1;
        workers[victim] = worker(url, ['--concurrency', '3']);
      }
      await vi.waitFor(async () => expect(await allDone(), 'every run to finish').toBe(true), { timeout: 120_000, interval: 50 });
    } finally {
      for (const w of workers) w.child.kill('SIGTERM');
      await Promise.all(workers.map((w) => w.done));
    }
    console.log(`[fleet chaos] ${kills} workers SIGKILLed and restarted`);
    expect(kills).toBeGreaterThanOrEqual(5);
    await expectAllDoneOnce(url, 30);
  }, 240_000);

  it('a worker frozen (SIGSTOP) past its lease is fenced off when it wakes: it writes nothing more for the run', async () => {
    const url = await freshDatabase('frozen');
    expect((await cli(['submit', 'demo', '--database-url', url, '--pace', '250'])).code).toBe(0);
    const frozen = worker(url);
    await vi.waitFor(async () => expect((await withDb(url, (db) => db.query('SELECT 1 FROM da_records'))).rowCount! >= 3, 'the first worker to be at work').toBe(true), { timeout: 60_000, interval: 50 });
    frozen.child.kill('SIGSTOP');
    await sleep(2000);
    const taker = await runCliAsync(['worker', '--database-url', url, '--lease-ms', '1500', '--poll-ms', '100', '--exit-when-idle'], { cwd: tempDir() });
    expect(taker.code, taker.stderr).toBe(0);
    expect(taker.stdout).toContain('resuming');
    const beforeWake = await withDb(url, (db) => db.query<{ n: string }>('SELECT count(*) AS n FROM da_records'));
    frozen.child.kill('SIGCONT');
    await vi.waitFor(() => expect(frozen.output(), 'the woken worker to notice').toContain('fenced off'), { timeout: 20_000, interval: 50 });
    frozen.child.kill('SIGTERM');
    await frozen.done;
    const afterWake = await withDb(url, (db) => db.query<{ n: string }>('SELECT count(*) AS n FROM da_records'));
    expect(afterWake.rows[0]!.n).toBe(beforeWake.rows[0]!.n);
    await expectAllDoneOnce(url, 1);
  }, 90_000);

  it('carries on through a PostgreSQL restart in the middle of runs: nothing lost, nothing twice', async () => {
    const url = await freshDatabase('restart');
    expect((await cli(['submit', 'demo', '--database-url', url, '--count', '8', '--pace', '120'])).code).toBe(0);
    const workers = [worker(url, ['--concurrency', '3']), worker(url, ['--concurrency', '3'])];
    try {
      await vi.waitFor(async () => expect((await withDb(url, (db) => db.query('SELECT 1 FROM da_records'))).rowCount! >= 10, 'runs under way').toBe(true), { timeout: 60_000, interval: 50 });
      server.restart();
      await vi.waitFor(async () => expect((await withDb(url, (db) => db.query('SELECT 1 FROM da_runs WHERE NOT finished'))).rowCount === 0, 'every run to finish after the restart').toBe(true), { timeout: 120_000, interval: 50 });
      for (const w of workers) expect(w.child.exitCode, w.output()).toBeNull();
    } finally {
      for (const w of workers) w.child.kill('SIGTERM');
      await Promise.all(workers.map((w) => w.done));
    }
    await expectAllDoneOnce(url, 8);
  }, 180_000);

  it('SIGTERM: the worker finishes its current step, releases its lease and exits; another finishes the run', async () => {
    const url = await freshDatabase('sigterm');
    expect((await cli(['submit', 'demo', '--database-url', url, '--pace', '600'])).code).toBe(0);
    const first = worker(url, ['--lease-ms', '60000']);
    await vi.waitFor(async () => expect((await withDb(url, (db) => db.query('SELECT 1 FROM da_records'))).rowCount! >= 2, 'the worker to be at work').toBe(true), { timeout: 60_000, interval: 50 });
    first.child.kill('SIGTERM');
    const stopped = await first.done;
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toContain('stopping (SIGTERM)');
    expect(stopped.stdout).toContain('stopped between two steps, saved; releasing the lease');
    const row = await withDb(url, (db) => db.query<{ finished: boolean; lease_owner: string | null }>('SELECT finished, lease_owner FROM da_runs'));
    expect(row.rows[0]).toEqual({ finished: false, lease_owner: null });
    const second = await runCliAsync(['worker', '--database-url', url, '--exit-when-idle', '--poll-ms', '100'], { cwd: tempDir() });
    expect(second.code, second.stderr).toBe(0);
    await expectAllDoneOnce(url, 1);
  }, 90_000);
});
