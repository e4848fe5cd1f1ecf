/**
 * keys rotate --seal-plain on PostgreSQL, with real worker and CLI processes on a real cluster: the
 * plain runs of a fleet (finished, waiting for a person, killed mid-turn after a side effect) are
 * sealed in, each in one transaction; afterwards nothing of their content is readable in any table,
 * each reads with the key, status and list work without it, and a resume with the key reuses the
 * ledger entry (the effect happened once). A rotation without --seal-plain leaves them plain; a run
 * a live worker holds is left plain and reported (exit 2), and sealed by the next rotation.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { KeyRing, startRun } from '../../src/index.ts';
import { submitRun, Worker } from '../../src/postgres.ts';
import { sealPlainPgRuns } from '../../src/store/pg/pg-seal-plain.ts';
import { openFleetSpec } from '../../src/store/pg/pg-run-keys.ts';
import { migrate } from '../../src/store/pg/schema.ts';
import { endTurnReply, scriptedModel, } from '../../src/testing.ts';
import { FLEET_DONE_TEXT } from '../../src/fleet/worker.ts';
import { claimRun, releaseLease } from '../../src/store/pg/leases.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { requireContent } from '../../src/store/store.ts';
import { type Database, openDatabase } from '../../src/store/pg/pool.ts';
import { BILLING_TASK, billingAgent } from '../helpers/billing-agent.ts';
import { cli, makePlainFleet, REASON, runSealing, SECRETS, worker } from '../helpers/fleet-seal-plain.ts';
import { audits, databaseText, loaded } from '../helpers/fleet-run-reads.ts';
import { toolUseProblems } from '../helpers/messages.ts';
import { freshDatabase, postgresAvailable, usePostgres, withDb } from '../helpers/use-postgres.ts';

const bytes1 = randomBytes(32);
const K1 = `k1:${bytes1.toString('base64')}`;
const ring1 = KeyRing.of([{ id: 'k1', key: bytes1 }]);

describe.skipIf(!postgresAvailable())('keys rotate --seal-plain on a fleet', () => {
  usePostgres({ prefix: 'seal_plain' });

  it('seals in finished, waiting and mid-turn runs: no content in any table, each reads with the key, status works without it, a resume does the effect once', async () => {
    const url = await freshDatabase();
    const { finished, waiting, midTurn } = await makePlainFleet(url);

    // Without --seal-plain a rotation leaves the plain runs plain.
    const rotated = await cli(['keys', 'rotate', '--database-url', url], { DURABLE_AGENT_KEYS: K1 });
    expect(rotated.code, rotated.stderr).toBe(0);
    await withDb(url, async (db) => {
      for (const id of [finished, waiting, midTurn]) expect(await runSealing(db, id)).toBe('plain');
      const text = await databaseText(db);
      for (const secret of SECRETS) expect(text).toContain(secret);
    });

    const sealed = await cli(['keys', 'rotate', '--database-url', url, '--seal-plain'], { DURABLE_AGENT_KEYS: K1 });
    expect(sealed.code, sealed.stderr).toBe(0);
    for (const id of [finished, waiting, midTurn]) expect(sealed.stdout).toContain(`sealed fleet run ${id}`);
    expect(sealed.stdout).toContain('sealed the task of schedule monthly');
    expect(sealed.stdout).toContain('3 plain runs sealed under k1, 1 plain schedule, 0 in use left for later, 0 could not be');

    await withDb(url, async (db) => {
      for (const id of [finished, waiting, midTurn]) expect(await runSealing(db, id)).toBe('sealed');
      const text = await databaseText(db);
      for (const secret of SECRETS) expect(text).not.toContain(secret);
      // What finds and operates runs stays readable: states, tool names, call ids.
      expect(text).toContain('write_report');
      expect(text).toContain('toolu_03');
      const { rows } = await db.query<{ master: string }>("SELECT run_key ->> 'master' AS master FROM da_runs ORDER BY id");
      expect(rows.map((row) => row.master)).toEqual(['k1', 'k1', 'k1']);

      // With the key each reads as before; without it, where it stands, its content refused naming the key.
      const done = await loaded(db, finished, ring1);
      expect(done.view.state).toBe('done');
      expect(done.view.context.finalText).toBe(FLEET_DONE_TEXT);
      const blind = await loaded(db, finished);
      expect(blind.view.state).toBe('done');
      expect(() => requireContent(blind.run)).toThrow(/"k1"/);
      expect((await loaded(db, waiting, ring1)).view.state).toBe('awaitingDecision');
      // The inbox entries open with the key, and none without it.
      const reader = new PgRunStore(db, finished, { keys: ring1 });
      await reader.load();
      expect((await reader.signals.waiting()).map((signal) => signal.data)).toEqual([{ note: 'paid by ACME Widgets Ltd' }]);
      expect(await reader.control.read()).toEqual([expect.objectContaining({ kind: 'pause', reason: 'hold it for the auditors of ACME' })]);
      const keyless = new PgRunStore(db, waiting);
      await keyless.load();
      expect(await keyless.decisions.read()).toEqual([]);
      const keyed = new PgRunStore(db, waiting, { keys: ring1 });
      await keyed.load();
      expect(await keyed.decisions.read()).toEqual([expect.objectContaining({ tool_use_id: 'toolu_03', reason: REASON })]);
    });

    const status = await cli(['status', '--database-url', url]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`${finished} +done`));
    const list = await cli(['list', '--database-url', url]);
    expect(list.code, list.stderr).toBe(0);
    for (const id of [finished, waiting, midTurn]) expect(list.stdout).toContain(id);

    // A second rotation finds nothing plain.
    const again = await cli(['keys', 'rotate', '--database-url', url, '--seal-plain'], { DURABLE_AGENT_KEYS: K1 });
    expect(again.stdout).toContain('0 plain runs sealed under k1, 0 plain schedules');

    // Resumed with the key: the denied run ends with the reason, the mid-turn run reuses its ledger entry.
    const resumed = await worker(url, { DURABLE_AGENT_KEYS: K1 });
    expect(resumed.code, resumed.stderr).toBe(0);
    await withDb(url, async (db) => {
      const denied = await loaded(db, waiting, ring1);
      expect(denied.view.state).toBe('done');
      expect(JSON.stringify(denied.view.context.messages)).toContain(REASON);
      const middle = await loaded(db, midTurn, ring1);
      expect(middle.view.state).toBe('done');
      expect(toolUseProblems(middle.view.context.messages)).toEqual([]);
      expect(await audits(db, midTurn)).toBe(1);
      for (const id of [finished, waiting, midTurn]) expect(await runSealing(db, id)).toBe('sealed');
      const text = await databaseText(db);
      for (const secret of SECRETS) expect(text).not.toContain(secret);
    });
  });

  it('leaves a run a live worker holds plain and reports it (exit 2); the next rotation seals it once it is let go', async () => {
    const url = await freshDatabase();
    const { finished, waiting, midTurn } = await makePlainFleet(url);
    const held = await withDb(url, (db) => claimRun(db, waiting, 'a-live-worker', 600_000));
    expect(held).not.toBeNull();

    const first = await cli(['keys', 'rotate', '--database-url', url, '--seal-plain'], { DURABLE_AGENT_KEYS: K1 });
    expect(first.code, first.stderr).toBe(2);
    expect(first.stdout).toMatch(new RegExp(`left plain fleet run ${waiting}: .*a-live-worker`));
    expect(first.stdout).toContain('2 plain runs sealed under k1, 1 plain schedule, 1 in use left for later');
    await withDb(url, async (db) => {
      expect(await runSealing(db, waiting)).toBe('plain');
      const { rows } = await db.query<{ lease_owner: string; lease_epoch: string }>('SELECT lease_owner, lease_epoch FROM da_runs WHERE id = $1', [waiting]);
      expect(rows[0]).toEqual({ lease_owner: 'a-live-worker', lease_epoch: String(held!.epoch) });
      for (const id of [finished, midTurn]) expect(await runSealing(db, id)).toBe('sealed');
      await releaseLease(db, held!);
    });

    const next = await cli(['keys', 'rotate', '--database-url', url, '--seal-plain'], { DURABLE_AGENT_KEYS: K1 });
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toContain(`sealed fleet run ${waiting}`);
    await withDb(url, async (db) => {
      expect(await runSealing(db, waiting)).toBe('sealed');
      const text = await databaseText(db);
      for (const secret of SECRETS) expect(text).not.toContain(secret);
    });
  });

  it("a signal and a cancel's reason sent by a process that read the run plain, after it was sealed in: sealed with the key, refused without it", async () => {
    const url = await freshDatabase();
    const { waiting } = await makePlainFleet(url);
    await withDb(url, async (db) => {
      // Both read the run plain, before it is sealed in.
      const keyless = new PgRunStore(db, waiting);
      await keyless.load();
      const keyed = new PgRunStore(db, waiting, { keys: ring1 });
      await keyed.load();
      expect(keyed.sealingOfRun().sealed).toBe(false);

      const sealed = await cli(['keys', 'rotate', '--database-url', url, '--seal-plain'], { DURABLE_AGENT_KEYS: K1 });
      expect(sealed.code, sealed.stderr).toBe(0);

      await expect(keyless.signals.send({ name: 'paid', id: 'p-9', data: { note: 'sent in plain words' }, by: 'bo', at: Date.now() })).rejects.toThrow(/"k1"/);
      await expect(keyless.control.write({ kind: 'cancel', by: 'bo', reason: 'cancelled in plain words', at: Date.now() })).rejects.toThrow(/"k1"/);
      expect(await keyed.signals.send({ name: 'paid', id: 'p-8', data: { note: 'sent with the key words' }, by: 'ana', at: Date.now() })).toEqual({ outcome: 'delivered' });
      expect(await keyed.control.write({ kind: 'cancel', by: 'ana', reason: 'cancelled with the key words', at: Date.now() })).toBe('written');
      expect(await runSealing(db, waiting)).toBe('sealed');
      const text = await databaseText(db);
      for (const secret of [...SECRETS, 'sent in plain words', 'cancelled in plain words', 'sent with the key words', 'cancelled with the key words']) expect(text).not.toContain(secret);
      const reader = new PgRunStore(db, waiting, { keys: ring1 });
      await reader.load();
      expect((await reader.signals.waiting()).map((signal) => signal.data)).toEqual([{ note: 'sent with the key words' }]);
    });
  });

  it('a plain run still queued gets its submitted task sealed: a worker without the key leaves it, one with the key runs it', async () => {
    const url = await freshDatabase();
    await withDb(url, async (db) => {
      await migrate(db);
      const sent: string[] = [];
      const agent = billingAgent(sent);
      const task = BILLING_TASK;
      await submitRun(db, { agent, task, runId: 'inv-1' });
      expect(await databaseText(db)).toContain(task);

      const report = await sealPlainPgRuns(db, ring1);
      expect(report.sealed).toEqual(['inv-1']);
      expect(await databaseText(db)).not.toContain(task);
      const { rows } = await db.query<{ spec: Record<string, unknown>; header: unknown }>('SELECT spec, header FROM da_runs WHERE id = $1', ['inv-1']);
      expect(rows[0]!.header).toBeNull();
      expect(rows[0]!.spec.task).toMatch(/^sealed:1:rk-/);
      expect((await openFleetSpec(db, 'inv-1', rows[0]!.spec, async () => ring1)).task).toBe(task);

      const log: string[] = [];
      await new Worker({ pool: db, agents: [agent], runConcurrency: 2, leaseMs: 60_000, exitWhenIdle: true, pollIntervalMs: 50, log: (line) => log.push(line) }).run();
      expect(log.filter((line) => line.includes('[ALERT] this worker cannot drive it'))).toEqual([expect.stringContaining('"k1"')]);
      await new Worker({ pool: db, agents: [agent], runConcurrency: 2, leaseMs: 60_000, exitWhenIdle: true, pollIntervalMs: 50, log: () => {}, keys: ring1 }).run();
      expect(sent).toHaveLength(1);
      const done = await loaded(db, 'inv-1', ring1);
      expect(done.view.state).toBe('done');
      expect(done.view.context.task).toBe(task);
      expect(await runSealing(db, 'inv-1')).toBe('sealed');
      for (const secret of [task, 'ACME Widgets Ltd', 'invoice sent to']) expect(await databaseText(db)).not.toContain(secret);
    });
  });

  it("signals sent while a run is being sealed in wait for its row: one in before the sealing-in is sealed by it, one after is sealed with the key or refused without it", async () => {
    const url = await freshDatabase();
    await withDb(url, async (db) => {
      await migrate(db);
      const task = 'Wait for the payment of ACME Widgets Ltd.';
      expect((await startRun({ store: new PgRunStore(db, 'sig-1'), model: scriptedModel([() => endTurnReply('Noted.')]), tools: [], task })).status).toBe('done');
      // Each party on a connection of its own, so one waiting for the row holds up no other.
      const parties = await Promise.all([0, 1, 2].map(() => openDatabase(url, 1)));
      try {
        const [sealerDb, keylessDb, keyedDb] = parties as [Database, Database, Database];
        const keyless = new PgRunStore(keylessDb, 'sig-1');
        await keyless.load();
        const keyed = new PgRunStore(keyedDb, 'sig-1', { keys: ring1 });
        await keyed.load();
        const waitingForRow = async (count: number) =>
          vi.waitFor(
            async () => {
              const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
              expect(rows[0]!.n).toBe(count);
            },
            { timeout: 20_000, interval: 50 },
          );

        // The row held (as a worker's append holds it): a signal kept plain queues first, then the sealing-in, then two more.
        const holder = await db.connect();
        await holder.query('BEGIN');
        await holder.query('SELECT 1 FROM da_runs WHERE id = $1 FOR UPDATE', ['sig-1']);
        const first = keyless.signals.send({ name: 'paid', id: 'p-1', data: { note: 'first in plain words' }, by: 'bo', at: Date.now() });
        await waitingForRow(1);
        const sealing = sealPlainPgRuns(sealerDb, ring1);
        await waitingForRow(2);
        await holder.query('COMMIT');
        holder.release();
        expect(await first).toEqual({ outcome: 'delivered' });
        expect((await sealing).sealed).toEqual(['sig-1']);

        const held = await db.connect();
        await held.query('BEGIN');
        await held.query('SELECT 1 FROM da_runs WHERE id = $1 FOR UPDATE', ['sig-1']);
        // Its refusal is taken as it comes: it may come while the row's holder is still being told its commit went through.
        const late = keyless.signals.send({ name: 'paid', id: 'p-2', data: { note: 'late in plain words' }, by: 'bo', at: Date.now() }).catch((error: unknown) => error);
        const keyedLate = keyed.signals.send({ name: 'paid', id: 'p-3', data: { note: 'late with the key words' }, by: 'ana', at: Date.now() });
        await waitingForRow(2);
        await held.query('COMMIT');
        held.release();
        expect(await late).toMatchObject({ name: 'KeyNotGivenError', message: expect.stringMatching(/"k1"/) });
        expect(await keyedLate).toEqual({ outcome: 'delivered' });

        expect(await runSealing(db, 'sig-1')).toBe('sealed');
        const text = await databaseText(db);
        for (const secret of [task, 'first in plain words', 'late in plain words', 'late with the key words']) expect(text).not.toContain(secret);
        const reader = new PgRunStore(db, 'sig-1', { keys: ring1 });
        await reader.load();
        expect((await reader.signals.waiting()).map((signal) => signal.data)).toEqual([{ note: 'first in plain words' }, { note: 'late with the key words' }]);
      } finally {
        await Promise.all(parties.map((party) => party.end()));
      }
    });
  });
});
