/**
 * Sealed runs on PostgreSQL, with real worker and CLI processes on a real cluster: a run driven by
 * a worker holding a key is sealed (its run key wrapped in da_runs.run_key), and nothing of its
 * content is readable in the database, decisions waiting in its inbox included; list, status and
 * the claim work without the key; a worker without it refuses the run naming the key and leaves it
 * alone; a SIGKILL after a side effect and a resume with the key do nothing twice; keys rotate
 * k1 → k2 over the fleet loses nothing, a batch at a time; a shredded run is unreadable while the
 * others read. And an agent's task submitted sealed waits in the queue sealed, a signal's data in
 * da_signals and a control request's reason in da_controls too.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KeyRing, startRun } from '../../src/index.ts';
import { RunIdTakenError } from '../../src/errors.ts';
import { FLEET_DONE_TEXT } from '../../src/fleet/worker.ts';
import { SAMPLE_NOTES, DEMO_TASK } from '../../src/demo/demo-task.ts';
import { submitRun, Worker } from '../../src/postgres.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { rotatePgRunKeys } from '../../src/store/pg/pg-run-keys.ts';
import { migrate } from '../../src/store/pg/schema.ts';
import { endTurnReply, scriptedModel, } from '../../src/testing.ts';
import { requireContent } from '../../src/store/store.ts';
import { toolUseProblems } from '../helpers/messages.ts';
import { BILLING_TASK, billingAgent } from '../helpers/billing-agent.ts';
import { audits, databaseText, loaded } from '../helpers/fleet-run-reads.ts';
import { cli, worker } from '../helpers/fleet-seal-plain.ts';
import { freshDatabase, postgresAvailable, usePostgres, withDb } from '../helpers/use-postgres.ts';

const bytes1 = randomBytes(32);
const bytes2 = randomBytes(32);
const K1 = `k1:${bytes1.toString('base64')}`;
const K2 = `k2:${bytes2.toString('base64')}`;
const ring1 = KeyRing.of([{ id: 'k1', key: bytes1 }]);


const NOTES_LINE = SAMPLE_NOTES.split('\n')[1]!.slice(2, 40);
const REASON = 'the board must not read this draft';

async function submitDemo(url: string, extra: string[] = []): Promise<string> {
  const submitted = await cli(['submit', 'demo', '--database-url', url, ...extra]);
  expect(submitted.code, submitted.stderr).toBe(0);
  return submitted.stdout.trim();
}

describe.skipIf(!postgresAvailable())('sealed runs in a fleet', () => {
  usePostgres({ prefix: 'sealed' });

  it('keeps no content readable in the database, decisions included; status works without the key, a worker without it refuses the run and leaves it', async () => {
    const url = await freshDatabase();
    const approved = await submitDemo(url, ['--require-approval', 'write_report']);
    const denied = await submitDemo(url, ['--require-approval', 'write_report']);
    const driven = await worker(url, { DURABLE_AGENT_KEYS: K1 });
    expect(driven.code, driven.stderr).toBe(0);
    for (const id of [approved, denied]) expect(driven.stdout).toContain(`run ${id}: waiting for a person (toolu_03 write_report)`);

    // Decided from other processes, with the key: the reason waits in da_decisions sealed.
    expect((await cli(['approve', '--database-url', url, '--run', approved, 'toolu_03', '--by', 'ana'], { DURABLE_AGENT_KEYS: K1 })).code).toBe(0);
    const deny = await cli(['deny', '--database-url', url, '--run', denied, 'toolu_03', '--reason', REASON], { DURABLE_AGENT_KEYS: K1 });
    expect(deny.code, deny.stderr).toBe(0);
    // Without the key a decision is refused, naming the key: nothing of it is written in plain.
    const keyless = await cli(['deny', '--database-url', url, '--run', denied, 'toolu_03', '--reason', 'plain words']);
    expect(keyless.code).not.toBe(0);
    expect(keyless.stderr).toContain('"k1"');

    // A worker without the key claims a decided run, refuses it naming the key, and leaves it as it was.
    const refused = await worker(url);
    expect(refused.code, refused.stderr).toBe(0);
    expect(refused.stdout).toMatch(/\[ALERT\] this worker cannot drive it, nothing was run: .*"k1"/);
    await withDb(url, async (db) => {
      const { rows } = await db.query<{ id: string; state: string; finished: boolean }>('SELECT id, state, finished FROM da_runs ORDER BY id');
      expect(rows.every((row) => row.state === 'awaitingDecision' && !row.finished)).toBe(true);
    });

    const finished = await worker(url, { DURABLE_AGENT_KEYS: K1 });
    expect(finished.code, finished.stderr).toBe(0);
    await withDb(url, async (db) => {
      const text = await databaseText(db);
      for (const secret of [DEMO_TASK, NOTES_LINE, 'Counting the words', 'Writing the report', REASON, FLEET_DONE_TEXT, 'denied by a person']) expect(text).not.toContain(secret);
      // What finds and operates runs stays readable: states, tool names, call ids.
      expect(text).toContain('write_report');
      expect(text).toContain('toolu_03');
      const { rows } = await db.query<{ run_key: { master: string }; header: { sealed: string; version: number } }>('SELECT run_key, header FROM da_runs WHERE id = $1', [approved]);
      expect(rows[0]!.run_key.master).toBe('k1');
      expect(rows[0]!.header.sealed).toMatch(/^rk-/);

      // With the key, the runs read as any other.
      const one = await loaded(db, approved, ring1);
      expect(one.view.state).toBe('done');
      expect(one.view.context.finalText).toBe(FLEET_DONE_TEXT);
      expect(toolUseProblems(one.view.context.messages)).toEqual([]);
      expect(await audits(db, approved)).toBe(1);
      const two = await loaded(db, denied, ring1);
      expect(JSON.stringify(two.view.context.messages)).toContain(REASON);
      expect(await audits(db, denied)).toBe(0);
      // Without it, the run reads where it stands, and its content is refused naming the key.
      const blind = await loaded(db, approved);
      expect(blind.view.state).toBe('done');
      expect(() => requireContent(blind.run)).toThrow(/"k1"/);
    });

    // status and result without the key: the runs, their states; the answer said sealed.
    const status = await cli(['status', '--database-url', url]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`${approved} +done`));
    const sealedAnswer = await cli(['result', '--database-url', url, '--run', approved]);
    expect(sealedAnswer.stdout).toContain('(sealed with the run key');
    expect(sealedAnswer.stdout).not.toContain(FLEET_DONE_TEXT);
    expect((await cli(['result', '--database-url', url, '--run', approved], { DURABLE_AGENT_KEYS: K1 })).stdout).toContain(FLEET_DONE_TEXT);
  });

  it('a worker SIGKILLed right after a side effect, resumed with the key: the ledger entry is reused, the effect happened once', async () => {
    const url = await freshDatabase();
    const id = await submitDemo(url);
    const killed = await worker(url, { DURABLE_AGENT_KEYS: K1, CRASH_AFTER: 'after-effect-write:3' });
    expect(killed.signal ?? killed.code).toBe('SIGKILL');
    await withDb(url, async (db) => expect(await audits(db, id)).toBe(1));
    const next = await worker(url, { DURABLE_AGENT_KEYS: K1 });
    expect(next.code, next.stderr).toBe(0);
    await withDb(url, async (db) => {
      const done = await loaded(db, id, ring1);
      expect(done.view.state).toBe('done');
      expect(await audits(db, id)).toBe(1);
      expect(toolUseProblems(done.view.context.messages)).toEqual([]);
      expect(await databaseText(db)).not.toContain(NOTES_LINE);
    });
  });

  it('keys rotate k1 → k2 over the fleet, a batch at a time and killed mid-way, then k1 dropped: every run opens; a shredded run is unreadable, the others read', async () => {
    const url = await freshDatabase();
    const ids = [await submitDemo(url), await submitDemo(url), await submitDemo(url)];
    expect((await worker(url, { DURABLE_AGENT_KEYS: K1 })).code).toBe(0);
    const ring2 = KeyRing.of([
      { id: 'k2', key: bytes2 },
      { id: 'k1', key: bytes1 },
    ]);
    await withDb(url, async (db) => {
      // Killed after its first batch (one run a batch): what committed stays, the rest is left under k1.
      await expect(
        rotatePgRunKeys(db, ring2, {
          batch: 1,
          onBatch: () => {
            throw new Error('killed');
          },
        }),
      ).rejects.toThrow('killed');
      const { rows } = await db.query<{ master: string }>("SELECT run_key ->> 'master' AS master FROM da_runs ORDER BY id");
      expect(rows.map((row) => row.master).sort()).toEqual(['k1', 'k1', 'k2']);
    });
    const rotated = await cli(['keys', 'rotate', '--database-url', url], { DURABLE_AGENT_KEYS: `${K2},${K1}` });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toContain('2 run keys rewrapped under k2, 1 already were, 0 could not be');
    const again = await cli(['keys', 'rotate', '--database-url', url], { DURABLE_AGENT_KEYS: `${K2},${K1}` });
    expect(again.stdout).toContain('0 run keys rewrapped under k2, 3 already were');
    for (const id of ids) {
      const answer = await cli(['result', '--database-url', url, '--run', id], { DURABLE_AGENT_KEYS: K2 });
      expect(answer.stdout, answer.stderr).toContain(FLEET_DONE_TEXT);
    }

    const shred = await cli(['prune', '--database-url', url, '--shred', '--run', ids[0]!], { DURABLE_AGENT_KEYS: K2 });
    expect(shred.code, shred.stderr).toBe(0);
    expect(shred.stdout).toContain(`shredded fleet run ${ids[0]}`);
    const gone = await cli(['result', '--database-url', url, '--run', ids[0]!], { DURABLE_AGENT_KEYS: K2 });
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain('is gone (a shredded run)');
    expect((await cli(['result', '--database-url', url, '--run', ids[1]!], { DURABLE_AGENT_KEYS: K2 })).stdout).toContain(FLEET_DONE_TEXT);
    const twice = await cli(['prune', '--database-url', url, '--shred', '--run', ids[0]!], { DURABLE_AGENT_KEYS: K2 });
    expect(twice.code).toBe(2);
    const status = await cli(['status', '--database-url', url]);
    expect(status.stdout).toMatch(new RegExp(`${ids[0]} +done`));
  });

  it('an agent task submitted with keys waits sealed; a worker with them runs it, one without leaves it queued, naming the key', async () => {
    const url = await freshDatabase();
    await withDb(url, async (db) => {
      await migrate(db);
      const sent: string[] = [];
      const agent = billingAgent(sent);
      const task = BILLING_TASK;
      expect(await submitRun(db, { agent, task, runId: 'inv-1', keys: ring1 })).toMatchObject({ created: true, spec: { task } });
      // A retry with the key compares the task opened: the same creates nothing, another is refused.
      expect(await submitRun(db, { agent, task, runId: 'inv-1', keys: ring1 })).toMatchObject({ created: false });
      await expect(submitRun(db, { agent, task: 'Invoice Globex.', runId: 'inv-1', keys: ring1 })).rejects.toThrow(RunIdTakenError);

      const log: string[] = [];
      await new Worker({ pool: db, agents: [agent], runConcurrency: 2, leaseMs: 60_000, exitWhenIdle: true, pollIntervalMs: 50, log: (line) => log.push(line) }).run();
      expect(log.filter((line) => line.includes('[ALERT] this worker cannot drive it'))).toEqual([expect.stringContaining('"k1"')]);
      const queued = await db.query<{ state: string; finished: boolean }>('SELECT state, finished FROM da_runs WHERE id = $1', ['inv-1']);
      expect(queued.rows[0]).toEqual({ state: 'queued', finished: false });

      await new Worker({ pool: db, agents: [agent], runConcurrency: 2, leaseMs: 60_000, exitWhenIdle: true, pollIntervalMs: 50, log: () => {}, keys: ring1 }).run();
      expect(sent).toHaveLength(1);
      const done = await loaded(db, 'inv-1', ring1);
      expect(done.view.state).toBe('done');
      expect(done.view.context.task).toBe(task);
      const text = await databaseText(db);
      for (const secret of [task, 'ACME Widgets Ltd', 'invoice sent to']) expect(text).not.toContain(secret);
    });
  });

  it("a sealed run's signals and control requests wait with their data and reasons sealed, opened by its key; a reader without it gets none of them", async () => {
    const url = await freshDatabase();
    await withDb(url, async (db) => {
      await migrate(db);
      const task = 'Wait for the payment of ACME Widgets Ltd.';
      const result = await startRun({ store: new PgRunStore(db, 'sig-1', { keys: ring1 }), model: scriptedModel([() => endTurnReply('Noted.')]), tools: [], task });
      expect(result.status).toBe('done');
      const sender = new PgRunStore(db, 'sig-1', { keys: ring1 });
      await sender.load();
      const data = { paid: '120 EUR from ACME Widgets Ltd' };
      expect(await sender.signals.send({ name: 'paid', id: 'p-1', data, by: 'ana', at: Date.now() })).toEqual({ outcome: 'delivered' });
      const { rows } = await db.query<{ signal: { name: string; by: string; data: unknown } }>('SELECT signal FROM da_signals WHERE run_id = $1', ['sig-1']);
      expect(rows[0]!.signal).toMatchObject({ name: 'paid', by: 'ana', data: expect.stringMatching(/^sealed:1:rk-/) });
      expect(await databaseText(db)).not.toContain('ACME Widgets Ltd');

      const reader = new PgRunStore(db, 'sig-1', { keys: ring1 });
      await reader.load();
      expect((await reader.signals.waiting()).map((signal) => signal.data)).toEqual([data]);
      const blind = new PgRunStore(db, 'sig-1');
      await blind.load();
      expect(await blind.signals.waiting()).toEqual([]);
      // Sent without the key: refused, naming it, nothing written.
      await expect(blind.signals.send({ name: 'paid', id: 'p-2', data: { paid: 'in plain' }, by: 'bo', at: Date.now() })).rejects.toThrow(/"k1"/);
      expect((await db.query('SELECT 1 FROM da_signals WHERE run_id = $1', ['sig-1'])).rowCount).toBe(1);

      // A pause's reason waits sealed too; who asked stays readable (status shows it), and a pause without a reason needs no key.
      expect(await sender.control.write({ kind: 'pause', by: 'ana', reason: 'hold it for ACME Widgets Ltd', at: Date.now() })).toBe('written');
      const pause = await db.query<{ by: string; reason: string }>("SELECT request ->> 'by' AS by, request ->> 'reason' AS reason FROM da_controls WHERE run_id = $1", ['sig-1']);
      expect(pause.rows[0]).toEqual({ by: 'ana', reason: expect.stringMatching(/^sealed:1:rk-/) });
      expect(await databaseText(db)).not.toContain('ACME Widgets Ltd');
      expect(await reader.control.read()).toEqual([expect.objectContaining({ kind: 'pause', by: 'ana', reason: 'hold it for ACME Widgets Ltd' })]);
      expect(await blind.control.read()).toEqual([]);
      await expect(blind.control.write({ kind: 'cancel', by: 'bo', reason: 'in plain', at: Date.now() })).rejects.toThrow(/"k1"/);
      expect(await blind.control.write({ kind: 'cancel', by: 'bo', reason: null, at: Date.now() })).toBe('written');
    });
  });
});
