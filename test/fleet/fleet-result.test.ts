/**
 * A fleet run's result without polling: awaitRun LISTENs on da_rest before it reads the run, so
 * it answers at once for a run at rest and is woken by the database for one that comes to rest
 * later (the safety-net re-read set far beyond the test, so that only a notification can wake
 * it); a lost connection is taken up again; and `durable-agent result` prints the answer, with or
 * without --wait, the exit code saying where the run rests.
 */
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/awaits/decide.ts';
import { AwaitRunTimeoutError, FleetRunMissingError } from '../../src/errors.ts';
import { awaitRun, readFleetRun } from '../../src/fleet/await-run.ts';
import { FLEET_DONE_TEXT } from '../../src/fleet/worker.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { openDatabase } from '../../src/store/pg/pool.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/testing.ts';
import { runCliAsync, startCli } from '../helpers/cli.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, pool, postgresAvailable, usePostgres, withDb } from '../helpers/use-postgres.ts';

const chargeScript = () => [toolUseReply([{ id: 'toolu_charge', name: 'charge_card', input: { amount: 42 } }]), endTurnReply('charged')];

/** Far beyond any wait of these tests: a wait that ends was woken by a notification. */
const NO_RECHECK = { recheckMs: 600_000 };
/** Generous for a notification on the same machine, and far below NO_RECHECK. */
const WOKEN_WITHIN_MS = 5_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function drive(db: pg.Pool, runId: string, extra: { requireApproval?: string[]; wait?: boolean } = {}) {
  const { tools } = countingTools();
  return startRun({ store: new PgRunStore(db, runId, { leaseMs: 60_000 }), model: scriptedModel(chargeScript()), tools, task: `Charge ${runId}`, ...extra });
}

/** A run's row with nothing run yet, as submit leaves it. */
async function queue(db: pg.Pool, runId: string): Promise<void> {
  await db.query(`INSERT INTO da_runs (id, spec) VALUES ($1, '{"kind":"api"}')`, [runId]);
}

/** The sessions of a database that sit idle after awaitRun's read of a run (its reads are marked): they listen and wait. */
const WAITING_SESSIONS = `FROM pg_stat_activity WHERE datname = $1 AND state = 'idle' AND query LIKE '/* awaitRun: LISTEN da_rest */%'`;

/** Until a session of database `datname` (but those of `except`) waits in awaitRun; their pids. Asked on the file's own pool: awaitRun may hold all of its own. */
async function untilWaiting(datname = 'postgres', except: readonly number[] = []): Promise<number[]> {
  const start = Date.now();
  for (;;) {
    const { rows } = await pool.query<{ pid: number }>(`SELECT pid ${WAITING_SESSIONS}`, [datname]);
    const pids = rows.map((row) => row.pid).filter((pid) => !except.includes(pid));
    if (pids.length > 0) return pids;
    if (Date.now() - start > 30_000) throw new Error('awaitRun never came to wait');
    await sleep(20);
  }
}

function wokenWithin<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not woken within ${WOKEN_WITHIN_MS} ms`)), WOKEN_WITHIN_MS);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe.skipIf(!postgresAvailable())('the result of a fleet run, without polling', () => {
  usePostgres();

  it('answers at once for a run already done: its answer, its tokens, finished', async () => {
    await drive(pool, 'result-done');
    const result = await awaitRun(pool, 'result-done', { ...NO_RECHECK, timeoutMs: WOKEN_WITHIN_MS });
    expect(result).toMatchObject({ runId: 'result-done', state: 'done', finished: true, resting: true, text: 'charged', failure: null, waiting: [], turn: 1 });
    expect(result.usage.input).toBeGreaterThan(0);
    expect(await readFleetRun(pool, 'result-done')).toEqual(result);
  });

  it('started before the run is driven, it is woken by the notification of its finish', async () => {
    await queue(pool, 'result-later');
    expect(await readFleetRun(pool, 'result-later')).toMatchObject({ state: 'queued', resting: false, finished: false, text: null });
    const waiting = awaitRun(pool, 'result-later', NO_RECHECK);
    await untilWaiting();
    const driven = await drive(pool, 'result-later');
    expect(driven.status).toBe('done');
    const result = await wokenWithin(waiting, 'awaitRun after the run finished');
    expect(result).toMatchObject({ state: 'done', finished: true, text: 'charged' });
  });

  it('a run that stops for a person: awaitingDecision with the call it waits on; once decided it is not at rest', async () => {
    await queue(pool, 'result-approval');
    const waiting = awaitRun(pool, 'result-approval', NO_RECHECK);
    await untilWaiting();
    expect((await drive(pool, 'result-approval', { requireApproval: ['charge_card'], wait: false })).status).toBe('waiting');
    const result = await wokenWithin(waiting, 'awaitRun after the run stopped for a person');
    expect(result).toMatchObject({ state: 'awaitingDecision', finished: false, resting: true, text: null, waiting: ['toolu_charge'] });
    // A decision given: a worker will take the run on, so it does not rest, and a wait waits on.
    await decide(new PgRunStore(pool, 'result-approval'), { tool_use_id: 'toolu_charge', verdict: 'approved', by: 'test' });
    expect(await readFleetRun(pool, 'result-approval')).toMatchObject({ state: 'awaitingDecision', resting: false });
    await expect(awaitRun(pool, 'result-approval', { ...NO_RECHECK, timeoutMs: 300 })).rejects.toBeInstanceOf(AwaitRunTimeoutError);
  });

  it('with a pool of one connection: a timeout, an abort and the finish each end the wait, the connection given back listening to nothing', async () => {
    const url = await freshDatabase('result_one');
    const one = await openDatabase(url, 1);
    const listening = async () => (await one.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_listening_channels()')).rows[0]!.n;
    try {
      await queue(one, 'one-run');
      const timedOut = await awaitRun(one, 'one-run', { ...NO_RECHECK, timeoutMs: 300 }).catch((error: unknown) => error);
      expect(timedOut).toBeInstanceOf(AwaitRunTimeoutError);
      expect(timedOut).toMatchObject({ name: 'AwaitRunTimeoutError', kind: 'stopped', runId: 'one-run', timeoutMs: 300, lastState: 'queued' });
      expect((timedOut as Error).message).toContain('goes on in the fleet regardless');
      expect(await listening()).toBe(0);

      const stop = new AbortController();
      const aborted = awaitRun(one, 'one-run', { ...NO_RECHECK, signal: stop.signal }).catch((error: unknown) => error);
      await untilWaiting('result_one');
      stop.abort(new Error('stop waiting'));
      expect(await wokenWithin(aborted, 'the aborted wait')).toMatchObject({ message: 'stop waiting' });
      expect(await listening()).toBe(0);

      // The one connection listens while it waits, and reads the journal once given back.
      const waiting = awaitRun(one, 'one-run', NO_RECHECK);
      await untilWaiting('result_one');
      await withDb(url, (db) => drive(db, 'one-run'));
      expect(await wokenWithin(waiting, 'awaitRun on a pool of one')).toMatchObject({ state: 'done', text: 'charged' });
      expect(await listening()).toBe(0);
    } finally {
      await one.end();
    }
  });

  it('a run id that does not exist: FleetRunMissingError, nothing waited for', async () => {
    const missing = await awaitRun(pool, 'no-such-run', NO_RECHECK).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(FleetRunMissingError);
    expect(missing).toMatchObject({ name: 'FleetRunMissingError', kind: 'refused', runId: 'no-such-run' });
    await expect(readFleetRun(pool, 'no-such-run')).rejects.toBeInstanceOf(FleetRunMissingError);
  });

  it('its listening connection killed while it waits: it listens again and is still woken', async () => {
    await queue(pool, 'result-reconnect');
    const waiting = awaitRun(pool, 'result-reconnect', NO_RECHECK);
    const killed = await untilWaiting();
    expect(killed).toHaveLength(1);
    await pool.query('SELECT pg_terminate_backend($1)', [killed[0]]);
    await untilWaiting('postgres', killed);
    await drive(pool, 'result-reconnect');
    expect(await wokenWithin(waiting, 'awaitRun after its connection was killed')).toMatchObject({ state: 'done', text: 'charged' });
  });

  it('durable-agent result --run ID: the answer of a done run (exit 0), a queued one (exit 130), --timeout, a missing id (exit 2), --json', async () => {
    const url = await freshDatabase('result_cli');
    await withDb(url, async (db) => {
      await drive(db, 'cli-done');
      await queue(db, 'cli-queued');
    });
    const cli = (args: string[]) => runCliAsync(['result', '--database-url', url, ...args], { cwd: tempDir() });
    const done = await cli(['--run', 'cli-done']);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain('[done] charged');
    expect(done.stdout).toMatch(/fleet run cli-done: done, turn 1, \d+ input and \d+ output tokens/);
    const json = await cli(['--run', 'cli-done', '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ runId: 'cli-done', state: 'done', finished: true, text: 'charged', waiting: [] });
    const queued = await cli(['--run', 'cli-queued']);
    expect(queued.code, queued.stderr).toBe(130);
    expect(queued.stdout).toContain('[queued]');
    expect(queued.stdout).toContain('--wait waits for its result');
    const timedOut = await cli(['--run', 'cli-queued', '--timeout', '1s']);
    expect(timedOut.code).toBe(130);
    expect(timedOut.stderr).toContain('Fleet run cli-queued did not come to rest within 1 s (it is queued)');
    const missing = await cli(['--run', 'cli-nothing']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('The fleet has no run with the id "cli-nothing"');
  });

  it('durable-agent result --run ID --wait: woken when a real worker finishes the run, prints its answer', async () => {
    const url = await freshDatabase('result_worker');
    const submitted = await runCliAsync(['submit', 'demo', '--database-url', url], { cwd: tempDir() });
    expect(submitted.code, submitted.stderr).toBe(0);
    const id = submitted.stdout.trim();
    const waiting = startCli(['result', '--database-url', url, '--run', id, '--wait', '--timeout', '2m'], { cwd: tempDir() });
    await untilWaiting('result_worker');
    const worker = await runCliAsync(['worker', '--database-url', url, '--exit-when-idle', '--poll-ms', '100'], { cwd: tempDir() });
    expect(worker.code, worker.stderr).toBe(0);
    const result = await waiting.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`[done] ${FLEET_DONE_TEXT}`);
  });
});
