/**
 * What is written for sealed fleet work before any run of it has a record, on a real PostgreSQL:
 * a schedule added with keys keeps its task sealed under a key of its own, a worker without the
 * key leaves its tick due (saying which key it needs) and one with it fires the tick once, the
 * run sealed under its own run key; a signal and a cancel's reason sent to a run submitted
 * sealed, still queued, wait sealed with its run key and read back once it runs. And no outside
 * view of the fleet (listRuns, list --json, the serve API's run) hands out a sealed string as a
 * task; keys rotate wraps a schedule's key again. After each, no da_ table (nor pg_dump of the
 * database) holds the plaintext.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { Message } from '../../machines/agent-loop.types.ts';
import { sendSignal } from '../../src/awaits/send-signal.ts';
import { waitTool } from '../../src/awaits/wait-tool.ts';
import { cancelRun } from '../../src/runtime/cancel-run.ts';
import { defineAgent, KeyRing } from '../../src/index.ts';
import { fireDueSchedules, listRuns, listSchedules, scheduleRun, submitRun, Worker } from '../../src/postgres.ts';
import { FIRED_AT_ONCE, ScheduleNameTakenError } from '../../src/fleet/schedules.ts';
import type { KeyHook, KeysGiven } from '../../src/seal/keys.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { migrate } from '../../src/store/pg/schema.ts';
import { FleetPlace } from '../../src/serve/fleet-place.ts';
import { apiRunOf } from '../../src/serve/api-run.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/testing.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { databaseText } from '../helpers/fleet-run-reads.ts';
import { toolResultOf } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { postgresBinDir } from '../helpers/postgres-server.ts';
import { freshDatabase, postgresAvailable, usePostgres, withDb } from '../helpers/use-postgres.ts';

const bytes1 = randomBytes(32);
const K1 = `k1:${bytes1.toString('base64')}`;
const ring1 = KeyRing.of([{ id: 'k1', key: bytes1 }]);
const other = KeyRing.of([{ id: 'k9', key: randomBytes(32) }]);

const TASK = 'Invoice Initech Corp for the March audit.';
const SIGNAL_DATA = { paid: '120 EUR from Initech Corp' };
const REASON = 'Initech Corp asked us to hold the invoice';

/** The database as pg_dump writes it (its data): what a backup holds. */
function dumped(url: string): string {
  const dump = execFileSync(path.join(postgresBinDir()!, 'pg_dump'), ['--data-only', url], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  expect(dump).toContain('COPY public.da_schedules');
  return dump;
}

function billing(runs: string[]) {
  return defineAgent({
    name: 'billing',
    model: scriptedModel(
      [
        (messages: readonly Message[]) => {
          runs.push(JSON.stringify(messages[0]?.content));
          return endTurnReply('Invoiced.');
        },
      ],
      { name: 'scripted-billing' },
    ),
    system: 'You send invoices.',
    tools: [],
  });
}

function worker(pool: pg.Pool, agent: ReturnType<typeof billing>, log: string[], keys?: KeysGiven) {
  return new Worker({ pool, agents: [agent], runConcurrency: 2, leaseMs: 60_000, exitWhenIdle: true, pollIntervalMs: 50, log: (line) => log.push(line), ...(keys ? { keys } : {}) });
}

/**
 * A KMS as a keys hook: it seals under `sealingKey` and opens what any such KMS sealed, but for
 * what was sealed under `lost` (a master key it no longer reaches): that open throws.
 */
function fakeKms(sealingKey: string, lost: string | null = null): KeyHook & { opened: string[] } {
  const opened: string[] = [];
  return {
    opened,
    sealingKeyId: sealingKey,
    seal: async (dataKey) => ({ key: sealingKey, data: Buffer.from(dataKey).toString('base64') }),
    open: async (wrapped) => {
      opened.push(wrapped.key);
      if (wrapped.key === lost) throw new Error(`access denied to ${lost}`);
      return Buffer.from(wrapped.data, 'base64');
    },
  };
}

async function row(db: pg.Pool, id: string) {
  const { rows } = await db.query<{ spec: { task: string }; run_key: { key: string; master: string } | null; state: string }>('SELECT spec, run_key, state FROM da_runs WHERE id = $1', [id]);
  return rows[0];
}

describe.skipIf(!postgresAvailable())('sealed fleet work before its runs have records', () => {
  usePostgres({ prefix: 'sealsched' });

  it('a schedule added with keys keeps its task sealed; a worker without the key leaves its tick due, one with it fires it once, the run sealed under its own key', async () => {
    const url = await freshDatabase();
    await withDb(url, async (db) => {
      await migrate(db);
      const told: string[] = [];
      const agent = billing(told);
      const options = { name: 'audit', agent, task: TASK, cron: '0 * * * *', keys: ring1 };
      const added = await scheduleRun(db, options);
      expect(added).toMatchObject({ created: true, schedule: { name: 'audit', task: TASK, sealedUnder: 'k1' } });
      const { rows } = await db.query<{ task: string; task_key: { master: string; key: string } }>('SELECT task, task_key FROM da_schedules');
      expect(rows[0]!.task).toMatch(/^sealed:1:rk-/);
      expect(rows[0]!.task_key.master).toBe('k1');
      expect(await databaseText(db)).not.toContain('Initech Corp');

      // Listed without the key: named with the key it needs; with it, opened.
      expect(await listSchedules(db)).toEqual([expect.objectContaining({ name: 'audit', task: '(sealed) needs the master key "k1"', sealedUnder: 'k1' })]);
      expect((await listSchedules(db, { keys: ring1 }))[0]!.task).toBe(TASK);
      // A retry compares the task opened; without the keys it is told apart by its sealing, never by a sealed string.
      expect((await scheduleRun(db, options)).created).toBe(false);
      await expect(scheduleRun(db, { ...options, task: 'Invoice Globex.' })).rejects.toThrow(/task: stored "Invoice Initech Corp/);
      await expect(scheduleRun(db, { ...options, keys: undefined })).rejects.toThrow(ScheduleNameTakenError);
      await expect(scheduleRun(db, { ...options, keys: undefined })).rejects.toThrow(/stored sealed under the master key "k1", given without keys/);

      await db.query(`UPDATE da_schedules SET next_tick_at = '2026-01-01T00:00:00Z'`);
      // A firing without the key, or with another one, takes nothing and moves nothing on: the tick stays due.
      for (const keys of [undefined, other]) {
        const left = await fireDueSchedules(db, undefined, { keys });
        expect(left).toMatchObject({ started: [], skipped: 0, leftSealed: [{ schedule: 'audit', masterKey: 'k1' }] });
        // Nothing this caller can fire is due, now or later: a worker waits its usual while, not a tick left due.
        expect(left.nextDueAt).toBeNull();
      }
      const keyless: string[] = [];
      await worker(db, agent, keyless).run();
      expect(keyless.filter((line) => line.includes('[ALERT] schedule audit'))).toEqual([expect.stringMatching(/sealed under the master key "k1".*left to a worker that holds it/)]);
      const stillDue = await db.query<{ next_tick_at: Date; started: string }>('SELECT next_tick_at, started FROM da_schedules');
      expect(stillDue.rows[0]).toEqual({ next_tick_at: new Date('2026-01-01T00:00:00Z'), started: '0' });
      expect((await db.query('SELECT id FROM da_runs')).rowCount).toBe(0);

      // Two firings with the key at once: the tick starts one run.
      const fired = await Promise.all([fireDueSchedules(db, undefined, { keys: ring1 }), fireDueSchedules(db, undefined, { keys: ring1 })]);
      const started = fired.flatMap((firing) => firing.started);
      expect(started).toHaveLength(1);
      const runId = started[0]!;
      const queued = (await row(db, runId))!;
      expect(queued.spec.task).toMatch(/^sealed:1:rk-/);
      expect(queued.run_key!.master).toBe('k1');
      // Its own run key, not the schedule's.
      expect(queued.run_key!.key).not.toBe(rows[0]!.task_key.key);
      expect(await fireDueSchedules(db, undefined, { keys: ring1 })).toMatchObject({ started: [], leftSealed: [] });

      await worker(db, agent, [], ring1).run();
      expect(told).toEqual([expect.stringContaining(TASK)]);
      const done = foldJournal(runId, await new PgRunStore(db, runId, { keys: ring1 }).load());
      expect(done.state).toBe('done');
      expect(done.context.task).toBe(TASK);
      expect((await db.query('SELECT id FROM da_runs')).rowCount).toBe(1);
      expect(await databaseText(db)).not.toContain('Initech Corp');
    });
    expect(dumped(url)).not.toContain('Initech Corp');
  });

  it('sealed schedules a keys hook cannot open use up no firing: the one it can open fires in the first, the others wait, each said once', async () => {
    const url = await freshDatabase();
    await withDb(url, async (db) => {
      await migrate(db);
      const told: string[] = [];
      const agent = billing(told);
      const gone = fakeKms('kms-old');
      const kms = fakeKms('kms-live', 'kms-old');
      const unopenable = Array.from({ length: FIRED_AT_ONCE + 10 }, (_, i) => `lost-${String(i).padStart(2, '0')}`);
      for (const name of unopenable) await scheduleRun(db, { name, agent, task: TASK, cron: '0 * * * *', keys: gone });
      await scheduleRun(db, { name: 'audit', agent, task: TASK, cron: '0 * * * *', keys: kms });
      // All due; those the hook cannot open first in the order firings take them.
      await db.query(`UPDATE da_schedules SET next_tick_at = CASE WHEN name = 'audit' THEN '2026-01-01T00:30:00Z'::timestamptz ELSE '2026-01-01T00:00:00Z'::timestamptz END`);

      const first = await fireDueSchedules(db, undefined, { keys: kms });
      expect(first.started).toEqual([expect.stringMatching(/^audit\./)]);
      expect(first.leftSealed.map((left) => left.schedule).sort()).toEqual(unopenable);
      expect(new Set(first.leftSealed.map((left) => left.masterKey))).toEqual(new Set(['kms-old']));
      const { rows: waiting } = await db.query<{ next_tick_at: Date; started: string }>(`SELECT DISTINCT next_tick_at, started FROM da_schedules WHERE name LIKE 'lost-%'`);
      expect(waiting).toEqual([{ next_tick_at: new Date('2026-01-01T00:00:00Z'), started: '0' }]);
      // The next tick due is audit's next, not the ticks left due: those are not this caller's to fire.
      const { rows: audit } = await db.query<{ next_tick_at: Date }>(`SELECT next_tick_at FROM da_schedules WHERE name = 'audit'`);
      expect(audit[0]!.next_tick_at.getTime()).toBeGreaterThan(new Date('2026-01-01T00:30:00Z').getTime());
      expect(first.nextDueAt).toEqual(audit[0]!.next_tick_at);
      // Passed over by a caller that could not open them lately: the hook is not asked again.
      const asked = kms.opened.filter((key) => key === 'kms-old').length;
      expect(asked).toBe(unopenable.length);
      expect(await fireDueSchedules(db, undefined, { keys: kms, passed: unopenable })).toEqual({ started: [], skipped: 0, leftSealed: [], nextDueAt: audit[0]!.next_tick_at });
      expect(kms.opened.filter((key) => key === 'kms-old')).toHaveLength(asked);

      // A worker with the hook: a second schedule it can open fires, each one it cannot is said once.
      await scheduleRun(db, { name: 'audit-2', agent, task: TASK, cron: '0 * * * *', keys: kms });
      await db.query(`UPDATE da_schedules SET next_tick_at = '2026-01-01T01:00:00Z' WHERE name = 'audit-2'`);
      const log: string[] = [];
      await worker(db, agent, log, kms).run();
      for (const name of unopenable) expect(log.filter((line) => line.includes(`[ALERT] schedule ${name}:`)), name).toHaveLength(1);
      expect(log.filter((line) => line.includes('[ALERT] schedule audit'))).toEqual([]);
      const { rows: runs } = await db.query<{ id: string; state: string }>('SELECT id, state FROM da_runs ORDER BY id COLLATE "C"');
      expect(runs).toEqual([
        { id: expect.stringMatching(/^audit-2\./), state: 'done' },
        { id: first.started[0], state: 'done' },
      ]);
      expect(told).toHaveLength(2);
    });
  });

  it('schedule add with the keys of the environment seals the task; schedule list --json never shows the sealed string', async () => {
    const url = await freshDatabase();
    const cli = (args: string[], env: Record<string, string | undefined> = {}) =>
      runCliAsync(['schedule', ...args, '--database-url', url], { cwd: tempDir(), env: { DURABLE_AGENT_KEYS: undefined, DURABLE_AGENT_KEY_FILE: undefined, ...env } });
    const added = await cli(['add', '--name', 'audit', '--agent', 'billing', '--allow-unknown-agent', '--cron', '0 9 * * 1-5', '--task', TASK], { DURABLE_AGENT_KEYS: K1 });
    expect(added.code, added.stderr).toBe(0);
    expect(added.stderr).toContain('sealed under the master key k1');
    const listed = await cli(['list', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ name: 'audit', task: '(sealed) needs the master key "k1"', sealedUnder: 'k1' })]);
    expect(JSON.parse((await cli(['list', '--json'], { DURABLE_AGENT_KEYS: K1 })).stdout)[0].task).toBe(TASK);
    await withDb(url, async (db) => expect(await databaseText(db)).not.toContain('Initech Corp'));
  });

  it("keys rotate wraps a sealed schedule's key again under the new master key: once k1 is dropped, a worker with k2 alone fires it", async () => {
    const url = await freshDatabase();
    const bytes2 = randomBytes(32);
    const K2 = `k2:${bytes2.toString('base64')}`;
    const ring2 = KeyRing.of([{ id: 'k2', key: bytes2 }]);
    await withDb(url, async (db) => {
      await migrate(db);
      await scheduleRun(db, { name: 'audit', agent: 'billing', allowUnknownAgent: true, task: TASK, cron: '0 * * * *', keys: ring1 });
    });
    const rotate = () => runCliAsync(['keys', 'rotate', '--database-url', url], { cwd: tempDir(), env: { DURABLE_AGENT_KEYS: `${K2},${K1}`, DURABLE_AGENT_KEY_FILE: undefined } });
    const rotated = await rotate();
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toContain('rewrapped the key of schedule audit');
    expect(rotated.stdout).toContain('1 schedule key rewrapped under k2, 0 already were, 0 could not be');
    expect((await rotate()).stdout).toContain('0 schedule keys rewrapped under k2, 1 already were');
    await withDb(url, async (db) => {
      expect((await listSchedules(db, { keys: ring2 }))[0]!.task).toBe(TASK);
      await db.query(`UPDATE da_schedules SET next_tick_at = '2026-01-01T00:00:00Z'`);
      expect(await fireDueSchedules(db, undefined, { keys: ring1 })).toMatchObject({ started: [], leftSealed: [{ schedule: 'audit', masterKey: 'k2' }] });
      const fired = await fireDueSchedules(db, undefined, { keys: ring2 });
      expect(fired.started).toHaveLength(1);
      expect((await row(db, fired.started[0]!))!.run_key!.master).toBe('k2');
    });
  });

  it('a signal and a cancel reason sent to a run submitted sealed, still queued, wait sealed with its run key; the run takes the signal with it', async () => {
    const url = await freshDatabase();
    await withDb(url, async (db) => {
      await migrate(db);
      const agent = defineAgent({
        name: 'waiter',
        model: scriptedModel([
          toolUseReply([{ id: 'toolu_w', name: 'wait', input: { event: 'paid' } }]),
          (messages: readonly Message[]) => endTurnReply(`woke: ${String(toolResultOf(messages, 'toolu_w')?.content)}`),
        ]),
        tools: [waitTool()],
      });
      await submitRun(db, { agent, task: TASK, runId: 'early', keys: ring1 });
      await submitRun(db, { agent, task: TASK, runId: 'early-cancelled', keys: ring1 });

      // Sent before the run has a record: sealed with the run key made at its submit.
      const sent = await sendSignal(new PgRunStore(db, 'early', { keys: ring1 }), { name: 'paid', data: SIGNAL_DATA, id: 'p-1', by: 'ana' });
      expect(sent).toMatchObject({ delivery: { outcome: 'delivered' }, waitingCall: null });
      const kept = await db.query<{ signal: { data: string; sealed: string } }>('SELECT signal FROM da_signals WHERE run_id = $1', ['early']);
      const runKey = (await row(db, 'early'))!.run_key!.key;
      expect(kept.rows[0]!.signal).toMatchObject({ data: expect.stringMatching(new RegExp(`^sealed:1:${runKey}:`)), sealed: runKey });
      // Without the key: refused, naming it, nothing written in plain.
      await expect(sendSignal(new PgRunStore(db, 'early'), { name: 'paid', data: { paid: 'in plain' }, id: 'p-2' })).rejects.toThrow(/"k1"/);
      expect((await db.query('SELECT 1 FROM da_signals')).rowCount).toBe(1);

      // A cancel of the other run, still queued: its reason waits sealed; without the key it is refused.
      await expect(cancelRun({ store: new PgRunStore(db, 'early-cancelled'), by: 'bo', reason: 'in plain words' })).rejects.toThrow(/"k1"/);
      await cancelRun({ store: new PgRunStore(db, 'early-cancelled', { keys: ring1 }), by: 'bo', reason: REASON });
      const request = await db.query<{ reason: string }>("SELECT request ->> 'reason' AS reason FROM da_controls WHERE run_id = $1", ['early-cancelled']);
      expect(request.rows).toEqual([{ reason: expect.stringMatching(/^sealed:1:rk-/) }]);
      expect(await databaseText(db)).not.toMatch(/Initech Corp|in plain/);

      // The worker with the key starts the run under that same key: its wait takes the signal sent before, opened.
      await new Worker({ pool: db, agents: [agent], runConcurrency: 2, leaseMs: 60_000, exitWhenIdle: true, pollIntervalMs: 50, log: () => {}, keys: ring1 }).run();
      const woke = foldJournal('early', await new PgRunStore(db, 'early', { keys: ring1 }).load());
      expect(woke.state).toBe('done');
      expect(woke.context.finalText).toContain('120 EUR from Initech Corp');
      const cancelled = foldJournal('early-cancelled', await new PgRunStore(db, 'early-cancelled', { keys: ring1 }).load());
      expect(cancelled.state).toBe('cancelled');
      expect(cancelled.context.cancellation).toMatchObject({ by: 'bo', reason: REASON });
      expect(await databaseText(db)).not.toContain('Initech Corp');
    });
    expect(dumped(url)).not.toContain('Initech Corp');
  });

  it('listRuns, list --json and the serve API show a sealed fleet task opened with the keys or named with the key it needs, never the sealed string', async () => {
    const url = await freshDatabase();
    await withDb(url, async (db) => {
      await migrate(db);
      await submitRun(db, { agent: 'billing', allowUnknownAgent: true, task: TASK, runId: 'listed', keys: ring1 });
      const [blind] = await listRuns(db);
      expect(blind!.task).toBe('(sealed) needs the master key "k1"');
      expect(JSON.stringify(blind)).not.toContain('sealed:1:');
      const [opened] = await listRuns(db, { keys: ring1 });
      expect(opened!.task).toBe(TASK);
      expect(opened!.fleet.spec).toMatchObject({ task: TASK });
      // The serve API's run, from the same summary (the server holds no key here).
      const found = await new FleetPlace(db).find('listed');
      const api = apiRunOf(found!.summary);
      expect(api.task).toBe('(sealed) needs the master key "k1"');
      expect(JSON.stringify(api)).not.toContain('sealed:1:');
    });
    const list = (env: Record<string, string | undefined>) =>
      runCliAsync(['list', '--database-url', url, '--json'], { cwd: tempDir(), env: { DURABLE_AGENT_KEYS: undefined, DURABLE_AGENT_KEY_FILE: undefined, ...env } });
    const keyless = await list({});
    expect(keyless.code, keyless.stderr).toBe(0);
    expect(keyless.stdout).not.toContain('sealed:1:');
    expect(JSON.parse(keyless.stdout)[0].spec.task).toBe('(sealed) needs the master key "k1"');
    const keyed = await list({ DURABLE_AGENT_KEYS: K1 });
    expect(JSON.parse(keyed.stdout)[0].spec.task).toBe(TASK);
  });
});
