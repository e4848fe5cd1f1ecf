/**
 * Durable waits in a fleet, on a real PostgreSQL: a run whose wait call waits lets go of its
 * lease and worker slot (da_waits says what for), is not claimed while nothing came, and a
 * worker takes it up when a signal arrives (NOTIFY wakes it) or when the time came; the signal
 * is taken once (da_signals: sent twice, taken once; an id taken once ever); a run whose worker
 * died before it said what it waits for is taken up once to look; `durable-agent signal --run ID`
 * delivers from another process.
 */
import type pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import type { Message } from '../../machines/agent-loop.types.ts';
import { defineAgent } from '../../src/agent/agent-definition.ts';
import { sendSignal } from '../../src/awaits/send-signal.ts';
import { waitTool } from '../../src/awaits/wait-tool.ts';
import { awaitRun, submitRun, Worker } from '../../src/postgres.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { claimNextRun } from '../../src/store/pg/leases.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { migrate } from '../../src/store/pg/schema.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/testing.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { toolResultOf } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, postgresAvailable, usePostgres, withDb } from '../helpers/use-postgres.ts';

function waiter(input: Record<string, unknown>) {
  return defineAgent({
    name: 'waiter',
    model: scriptedModel([
      toolUseReply([{ id: 'toolu_w', name: 'wait', input }]),
      (messages: readonly Message[]) => endTurnReply(`woke: ${String(toolResultOf(messages, 'toolu_w')?.content)}`),
    ]),
    tools: [waitTool()],
  });
}

function workerOf(pool: pg.Pool, agent: ReturnType<typeof waiter>, log: string[], exitWhenIdle = false, pollIntervalMs = 100) {
  return new Worker({ pool, agents: [agent], runConcurrency: 2, leaseMs: 5_000, exitWhenIdle, pollIntervalMs, log: (line) => log.push(line) });
}

async function row(db: pg.Pool, id: string) {
  const { rows } = await db.query<{ state: string; lease_owner: string | null; finished: boolean }>('SELECT state, lease_owner, finished FROM da_runs WHERE id = $1', [id]);
  return rows[0]!;
}

async function decisionsOf(db: pg.Pool, id: string) {
  const loaded = await new PgRunStore(db, id).load();
  return loaded.records.filter((stored) => stored.record.event === 'DECISION').flatMap((stored) => stored.record.decisions?.add ?? []);
}

describe.skipIf(!postgresAvailable())('durable waits in a fleet', () => {
  usePostgres({ prefix: 'waits' });

  it('a waiting run holds no lease, is not claimed until its signal, and a running worker takes it up when the signal arrives', async () => {
    const url = await freshDatabase();
    await withDb(url, async (db) => {
      await migrate(db);
      const agent = waiter({ event: 'approved-by-ops' });
      await submitRun(db, { agent, task: 'wait for ops', runId: 'w-1' });
      const log: string[] = [];
      // It looks for work on its own only every ten minutes: whatever it takes up sooner, a wake took it to.
      const worker = workerOf(db, agent, log, false, 600_000);
      const running = worker.run();
      try {
        await vi.waitFor(async () => expect((await row(db, 'w-1')).state === 'awaitingDecision' && (await row(db, 'w-1')).lease_owner === null).toBe(true), { timeout: 20_000, interval: 25 });
        // An event wait with no timeout rests until someone sends the event: a caller awaiting the run is told so.
        expect(await awaitRun(db, 'w-1', { timeoutMs: 30_000 })).toMatchObject({ state: 'awaitingDecision', resting: true, waiting: ['toolu_w'] });
        const { rows: waits } = await db.query('SELECT tool_use_id, event, wake_at FROM da_waits WHERE run_id = $1', ['w-1']);
        expect(waits).toEqual([{ tool_use_id: 'toolu_w', event: 'approved-by-ops', wake_at: null }]);
        // The console's row says what it waits for.
        const { fleetRows } = await import('../../src/console/fleet-rows.ts');
        expect((await fleetRows(db)).find((r) => r.runId === 'w-1')?.waitsFor).toBe('toolu_w wait: event approved-by-ops');
        // Nothing came: the idle worker leaves it alone (a claim finds nothing to do).
        await new Promise((resolve) => setTimeout(resolve, 400));
        expect(await row(db, 'w-1')).toMatchObject({ state: 'awaitingDecision', lease_owner: null });
        expect(await claimNextRun(db, 'probe', 1000)).toBeNull();

        const store = new PgRunStore(db, 'w-1');
        const sent = await sendSignal(store, { name: 'approved-by-ops', data: { ticket: 42 }, by: 'ops' });
        expect(sent).toMatchObject({ delivery: { outcome: 'delivered' }, waitingCall: 'toolu_w' });
        expect((await sendSignal(store, { name: 'approved-by-ops', data: { ticket: 43 }, by: 'ops' })).delivery).toEqual({ outcome: 'waiting' });
        // Woken by the NOTIFY of the signal's insert, not by its ten-minute poll.
        await vi.waitFor(async () => expect((await row(db, 'w-1')).finished).toBe(true), { timeout: 20_000, interval: 25 });
      } finally {
        worker.stop('test over');
        await running;
      }
      const view = foldJournal('w-1', await new PgRunStore(db, 'w-1').load());
      expect(view.state).toBe('done');
      expect(view.context.finalText).toContain('woke: The event approved-by-ops arrived (sent by ops at');
      expect(view.context.finalText).toContain('Its data: {"ticket":42}');
      expect(await decisionsOf(db, 'w-1')).toHaveLength(1);
      // Taken once: the second copy was never delivered; the one taken names its wait.
      const { rows } = await db.query('SELECT name, taken_by FROM da_signals WHERE run_id = $1', ['w-1']);
      expect(rows).toEqual([{ name: 'approved-by-ops', taken_by: 'toolu_w' }]);
    });
  }, 60_000);

  it('a timed wait lets go of its lease and is taken up again when its time came', async () => {
    const url = await freshDatabase();
    await withDb(url, async (db) => {
      await migrate(db);
      const agent = waiter({ seconds: 1.5 });
      await submitRun(db, { agent, task: 'wait', runId: 't-1' });
      const log: string[] = [];
      const worker = workerOf(db, agent, log);
      const running = worker.run();
      try {
        await vi.waitFor(async () => expect((await row(db, 't-1')).state === 'awaitingDecision' && (await row(db, 't-1')).lease_owner === null).toBe(true), { timeout: 20_000, interval: 25 });
        // A caller awaiting the run's result is not told it rests while it waits for its time: it gets the answer.
        expect(await awaitRun(db, 't-1', { timeoutMs: 20_000 })).toMatchObject({ state: 'done', text: expect.stringContaining('woke: The wait is over (1.5 s)') });
      } finally {
        worker.stop('test over');
        await running;
      }
      const loaded = await new PgRunStore(db, 't-1').load();
      const needed = loaded.records.find((stored) => stored.record.event === 'DECISION_NEEDED')!.record;
      const [decision] = await decisionsOf(db, 't-1');
      expect(decision).toMatchObject({ by: 'clock', at: needed.at + 1500 });
      expect(log.join('\n')).toMatch(/run t-1: waiting .*lease released/);
    });
  }, 60_000);

  it('signals of one id are taken once ever; a run whose worker died before saying what it waits for is taken up to look', async () => {
    const url = await freshDatabase();
    await withDb(url, async (db) => {
      await migrate(db);
      const agent = waiter({ event: 'paid', timeoutSeconds: 600 });
      await submitRun(db, { agent, task: 'wait', runId: 'p-1' });
      const store = new PgRunStore(db, 'p-1');
      // Sent before the run even started: kept for its wait.
      expect((await sendSignal(store, { name: 'paid', id: 'inv-1', data: 1, by: 'billing' })).delivery).toEqual({ outcome: 'delivered' });
      expect((await sendSignal(store, { name: 'paid', id: 'inv-1', data: 1, by: 'billing' })).delivery).toEqual({ outcome: 'waiting' });
      const log: string[] = [];
      await workerOf(db, agent, log, true).run();
      expect(foldJournal('p-1', await store.load()).context.finalText).toContain('id inv-1');
      await expect(sendSignal(store, { name: 'paid', id: 'inv-1', data: 1, by: 'billing' })).rejects.toThrow(/has ended/);
      expect((await store.signals.send({ name: 'paid', id: 'inv-1', data: 1, by: 'billing', at: Date.now() }))).toEqual({ outcome: 'taken', tool_use_id: 'toolu_w' });

      // What a worker killed right after the wait's DECISION_NEEDED leaves: awaiting, its lease expired, no da_waits row.
      await submitRun(db, { agent, task: 'wait again', runId: 'p-2' });
      const stopper = workerOf(db, agent, log, true);
      await stopper.run();
      expect(await row(db, 'p-2')).toMatchObject({ state: 'awaitingDecision', lease_owner: null });
      await db.query(`DELETE FROM da_waits WHERE run_id = 'p-2'`);
      await db.query(`UPDATE da_runs SET lease_owner = 'dead-worker', lease_expires_at = now() - interval '1 second' WHERE id = 'p-2'`);
      const looked = workerOf(db, agent, log, true);
      await looked.run();
      // Taken up once: it said what it waits for, let go of the lease, and is not claimed again.
      expect(await row(db, 'p-2')).toMatchObject({ state: 'awaitingDecision', lease_owner: null });
      const { rows } = await db.query('SELECT event FROM da_waits WHERE run_id = $1', ['p-2']);
      expect(rows).toEqual([{ event: 'paid' }]);
      expect(await claimNextRun(db, 'probe', 1000)).toBeNull();
      // From another process: durable-agent signal --database-url URL --run ID.
      const sent = await runCliAsync(['signal', '--database-url', url, '--run', 'p-2', 'paid', '--id', 'inv-2', '--data', '2', '--by', 'billing'], { cwd: tempDir() });
      expect(sent.code, sent.stderr).toBe(0);
      expect(sent.stdout).toContain('[signal] paid (id inv-2) delivered to fleet run p-2: toolu_w waits for it');
      await workerOf(db, agent, log, true).run();
      expect(foldJournal('p-2', await new PgRunStore(db, 'p-2').load()).state).toBe('done');
    });
  }, 60_000);
});
