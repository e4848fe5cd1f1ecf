/**
 * Schedules in a fleet's database: added once (the same add again changes nothing, another one
 * under its name is refused), listed, paused, resumed and removed; fired by many workers at once,
 * each tick starts one run; missed ticks caught up as the schedule says; overlap skip leaves a
 * tick alone while the last run goes on. Then real workers, one SIGKILLed and started again: every
 * tick of a per-second schedule started one run, each run done, each invoice sent once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { registerAgents } from '../../src/fleet/agent-registry.ts';
import { listQueuedRuns } from '../../src/fleet/run-queue.ts';
import { fireDueSchedules, listSchedules, pauseSchedule, removeSchedule, resumeSchedule, ScheduleCronError, ScheduleNameTakenError, ScheduleNotFoundError, ScheduleRefusedError, scheduleRun } from '../../src/fleet/schedules.ts';
import { UnknownAgentError } from '../../src/fleet/submit-run.ts';
import { migrate } from '../../src/store/pg/schema.ts';
import { openDatabase } from '../../src/store/pg/pool.ts';
import { REPO, runCliAsync, startCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, postgresAvailable, usePostgres, withDb } from '../helpers/use-postgres.ts';

const MODULE = path.join(REPO, 'test', 'fixtures', 'agents', 'billing-agents.mjs');

/** A fresh fleet database where a worker has registered the agent `billing`. */
async function fleetWithBilling(): Promise<string> {
  const url = await freshDatabase();
  await withDb(url, async (db) => {
    await migrate(db);
    await registerAgents(db, [{ name: 'billing', version: 'v1', tools: [] } as never], 'test-worker');
  });
  return url;
}

/** The runs the schedule of this name started, by id. */
async function runsOf(db: Parameters<typeof listQueuedRuns>[0], name: string): Promise<string[]> {
  const runs = await listQueuedRuns(db);
  return runs
    .filter((run) => run.spec.kind === 'agent' && run.spec.schedule?.name === name)
    .map((run) => run.id)
    .sort();
}

describe.skipIf(!postgresAvailable())('schedules', () => {
  usePostgres({ prefix: 'schedules' });

  it('is added once: the same add again changes nothing, another under its name is refused; refusals write nothing', async () => {
    const url = await fleetWithBilling();
    await withDb(url, async (db) => {
      const options = { agent: 'billing', task: 'Invoice ACME.', cron: '0 9 * * 1-5', timezone: 'Europe/Paris', maxTurns: 5 };
      const first = await scheduleRun(db, options);
      expect(first.created).toBe(true);
      expect(first.schedule).toMatchObject({ name: 'billing', agent: 'billing', cron: '0 9 * * 1-5', timezone: 'Europe/Paris', catchUp: 1, overlap: 'skip', paused: false, started: 0, skipped: 0, lastRunId: null });
      // 09:00 in Paris is 07:00 or 08:00 UTC.
      expect([7, 8]).toContain(first.schedule.nextTickAt!.getUTCHours());
      expect((await scheduleRun(db, options)).created).toBe(false);
      await expect(scheduleRun(db, { ...options, task: 'Invoice someone else.' })).rejects.toThrow(ScheduleNameTakenError);
      await expect(scheduleRun(db, { ...options, task: 'Invoice someone else.' })).rejects.toThrow(/task: stored "Invoice ACME\.", given "Invoice someone else\."/);
      await expect(scheduleRun(db, { ...options, name: 'other', cron: '0 9 * *' })).rejects.toThrow(ScheduleCronError);
      await expect(scheduleRun(db, { ...options, name: 'other', timezone: 'Mars/Olympus' })).rejects.toThrow(ScheduleCronError);
      await expect(scheduleRun(db, { ...options, name: 'bad.name' })).rejects.toThrow(ScheduleRefusedError);
      await expect(scheduleRun(db, { ...options, name: 'other', catchUp: -1 })).rejects.toThrow(ScheduleRefusedError);
      await expect(scheduleRun(db, { ...options, name: 'other', task: ' ' })).rejects.toThrow(ScheduleRefusedError);
      await expect(scheduleRun(db, { ...options, name: 'other', agent: 'billnig' })).rejects.toThrow(UnknownAgentError);
      expect((await scheduleRun(db, { ...options, name: 'later', agent: 'reports', allowUnknownAgent: true })).created).toBe(true);
      expect((await listSchedules(db)).map((schedule) => schedule.name)).toEqual(['billing', 'later']);
      await removeSchedule(db, 'later');
      await expect(removeSchedule(db, 'later')).rejects.toThrow(ScheduleNotFoundError);
      await expect(pauseSchedule(db, 'nothing')).rejects.toThrow(ScheduleNotFoundError);
      expect((await listSchedules(db)).map((schedule) => schedule.name)).toEqual(['billing']);
    });
  });

  it('fired by eight workers at once, each tick starts one run; missed ticks caught up, the latest catchUp of them', async () => {
    const url = await fleetWithBilling();
    const pools = await Promise.all(Array.from({ length: 8 }, () => openDatabase(url, 2)));
    try {
      const [db] = pools as [(typeof pools)[0]];
      await scheduleRun(db, { name: 'hourly', agent: 'billing', task: 'Invoice ACME.', cron: '0 * * * *', catchUp: 3, overlap: 'allow' });
      // The fleet was down since new year's day: thousands of hourly ticks missed.
      await db.query(`UPDATE da_schedules SET next_tick_at = '2026-01-01T00:00:00Z' WHERE name = 'hourly'`);
      const firings = await Promise.all(pools.flatMap((pool) => [fireDueSchedules(pool), fireDueSchedules(pool)]));
      const started = firings.flatMap((fired) => fired.started);
      const runs = await runsOf(db, 'hourly');
      // Three missed ticks caught up, and in the first minute of an hour the one on time too: each once.
      const firedAt = (await db.query<{ now: Date }>('SELECT now()')).rows[0]!.now;
      expect(runs).toHaveLength(firedAt.getUTCMinutes() === 0 ? 4 : 3);
      expect([...started].sort()).toEqual(runs);
      const [schedule] = await listSchedules(db);
      expect(schedule).toMatchObject({ started: runs.length, lastRunId: runs.at(-1) });
      expect(schedule!.skipped).toBeGreaterThan(3);
      const { rows } = await db.query<{ now: Date }>('SELECT now()');
      expect(schedule!.nextTickAt!.getTime()).toBeGreaterThan(rows[0]!.now.getTime());
      expect(schedule!.nextTickAt!.getUTCMinutes()).toBe(0);
      // The runs are those of the latest hours, an hour apart, each named after its tick.
      const ticks = runs.map((id) => Date.parse(id.replace(/^hourly\.(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z')));
      expect(ticks[1]! - ticks[0]!).toBe(3_600_000);
      expect(ticks.at(-1)! - ticks.at(-2)!).toBe(3_600_000);
      const [run] = await listQueuedRuns(db);
      expect(run!.spec).toMatchObject({ kind: 'agent', agent: 'billing', task: 'Invoice ACME.', schedule: { name: 'hourly' } });
      // Nothing is due any more: firing again starts nothing.
      expect((await fireDueSchedules(db)).started).toEqual([]);
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });

  it('overlap skip: a tick while the last run goes on starts nothing; once it is at rest, the next tick starts one', async () => {
    const url = await fleetWithBilling();
    await withDb(url, async (db) => {
      await scheduleRun(db, { name: 'nightly', agent: 'billing', task: 'Invoice ACME.', cron: '0 * * * *', catchUp: 5 });
      await db.query(`INSERT INTO da_runs (id, spec) VALUES ('still-going', '{"kind":"agent","agent":"billing","task":"x"}')`);
      await db.query(`UPDATE da_schedules SET next_tick_at = '2026-01-01T00:00:00Z', last_run_id = 'still-going' WHERE name = 'nightly'`);
      const skipped = await fireDueSchedules(db);
      expect(skipped.started).toEqual([]);
      expect((await listSchedules(db))[0]).toMatchObject({ started: 0, lastRunId: 'still-going' });
      expect(await runsOf(db, 'nightly')).toEqual([]);

      await db.query(`UPDATE da_runs SET state = 'done', finished = true WHERE id = 'still-going'`);
      await db.query(`UPDATE da_schedules SET next_tick_at = '2026-01-01T00:00:00Z' WHERE name = 'nightly'`);
      const fired = await fireDueSchedules(db);
      // Of five ticks to catch up, one: two started together would overlap.
      expect(fired.started).toHaveLength(1);
      expect(await runsOf(db, 'nightly')).toEqual(fired.started);
    });
  });

  it('paused, its ticks start nothing; resumed, it goes on from its next tick, not the ones that fell while paused', async () => {
    const url = await fleetWithBilling();
    await withDb(url, async (db) => {
      await scheduleRun(db, { name: 'hourly', agent: 'billing', task: 'Invoice ACME.', cron: '0 * * * *', catchUp: 5 });
      expect((await pauseSchedule(db, 'hourly')).paused).toBe(true);
      await db.query(`UPDATE da_schedules SET next_tick_at = '2026-01-01T00:00:00Z' WHERE name = 'hourly'`);
      expect((await fireDueSchedules(db)).started).toEqual([]);
      const resumed = await resumeSchedule(db, 'hourly');
      expect(resumed.paused).toBe(false);
      expect(resumed.nextTickAt!.getTime()).toBeGreaterThan(Date.parse('2026-06-01T00:00:00Z'));
      expect((await fireDueSchedules(db)).started).toEqual([]);
      expect(await runsOf(db, 'hourly')).toEqual([]);
    });
  });

  it('schedule add|list|pause|resume|remove on the command line; refusals exit 2 and say what to give', async () => {
    const url = await fleetWithBilling();
    const cli = (args: string[]) => runCliAsync(['schedule', ...args, '--database-url', url], { cwd: tempDir() });
    const added = await cli(['add', '--agent', 'billing', '--cron', '0 9 * * 1-5', '--timezone', 'Europe/Paris', '--task', 'Invoice ACME.']);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout.trim()).toBe('billing');
    expect(added.stderr).toMatch(/next tick is \d{4}-\d{2}-\d{2} 09:00:00 Europe\/Paris/);
    expect((await cli(['add', '--agent', 'billing', '--cron', '0 9 * * 1-5', '--timezone', 'Europe/Paris', '--task', 'Invoice ACME.'])).stderr).toContain('nothing was changed');
    const bad = await cli(['add', '--name', 'x', '--agent', 'billing', '--cron', '61 * * * *', '--task', 'Invoice ACME.']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('five fields');
    const listed = await cli(['list']);
    expect(listed.stdout).toMatch(/^NAME +AGENT +CRON +ZONE +NEXT TICK +LAST RUN +STARTED +SKIPPED$/m);
    expect(listed.stdout).toMatch(/^billing +billing +0 9 \* \* 1-5 +Europe\/Paris +\S+ +- +0 +0$/m);
    expect(JSON.parse((await cli(['list', '--json'])).stdout)).toMatchObject([{ name: 'billing', paused: false }]);
    expect((await cli(['pause', '--name', 'billing'])).stdout).toContain('paused');
    expect((await cli(['list'])).stdout).toMatch(/^billing .* paused /m);
    expect((await cli(['resume', '--name', 'billing'])).stdout).toContain('resumed');
    const unknown = await cli(['pause', '--name', 'nothing']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('schedule list');
    expect((await cli(['remove', '--name', 'billing'])).stdout).toContain('removed');
    expect((await cli(['list'])).stdout).toContain('no schedules');
  });

  it('two real workers, one SIGKILLed and started again: every tick of a per-second schedule started one run, each done, each invoice sent once', async () => {
    const url = await fleetWithBilling();
    const outbox = tempDir();
    const env = { BILLING_OUTBOX: outbox, BILLING_PACE_MS: '5' };
    const worker = () => startCli(['worker', '--database-url', url, '--agents', MODULE, '--lease', '1s', '--poll-interval', '100ms', '--run-concurrency', '4'], { cwd: tempDir(), env });
    const added = await runCliAsync(['schedule', 'add', '--name', 'tick', '--agent', 'billing', '--cron', '* * * * * *', '--task', 'Invoice ACME.', '--overlap', 'allow', '--catch-up', '1000', '--database-url', url], { cwd: tempDir(), env });
    expect(added.code, added.stderr).toBe(0);
    const a = worker();
    const b = worker();
    await withDb(url, async (db) => {
      await vi.waitFor(async () => expect((await runsOf(db, 'tick')).length, 'ticks started runs').toBeGreaterThanOrEqual(4), { timeout: 60_000, interval: 100 });
      a.child.kill('SIGKILL');
      await a.done;
      const c = worker();
      await vi.waitFor(async () => expect((await runsOf(db, 'tick')).length, 'ticks went on with the workers left').toBeGreaterThanOrEqual(8), { timeout: 60_000, interval: 100 });
      b.child.kill('SIGKILL');
      await b.done;
      await vi.waitFor(async () => expect((await runsOf(db, 'tick')).length, 'ticks went on').toBeGreaterThanOrEqual(12), { timeout: 60_000, interval: 100 });
      const paused = await runCliAsync(['schedule', 'pause', '--name', 'tick', '--database-url', url], { cwd: tempDir() });
      expect(paused.code, paused.stderr).toBe(0);
      await vi.waitFor(async () => expect((await listQueuedRuns(db)).every((run) => run.state === 'done'), 'every run is done').toBe(true), { timeout: 120_000, interval: 100 });
      c.child.kill('SIGTERM');
      await c.done;

      const ids = await runsOf(db, 'tick');
      const ticks = ids.map((id) => Date.parse(id.replace(/^tick\.(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z')));
      // No tick missed and none twice: one run for each second from the first to the last.
      expect(ticks.every((tick, at) => at === 0 || tick - ticks[at - 1]! === 1_000), ids.join(' ')).toBe(true);
      const [schedule] = await listSchedules(db);
      expect(schedule!.started).toBe(ids.length);
      const audit = fs.readFileSync(path.join(outbox, 'audit.log'), 'utf8').trim().split('\n');
      expect(audit).toHaveLength(ids.length);
      expect(new Set(audit.map((line) => line.split(' ')[0])).size).toBe(ids.length);
    });
  });
});
