/**
 * The fleet runs a user's agents: workers given definitions register them and claim only runs of
 * those agents at a version they accept; tasks are submitted by agent and run id (a retry
 * creates nothing, another task under the id is refused, an agent no worker registered is
 * refused unless asked); a run pinned to a version no worker has waits, says so, and is
 * finished by a worker with that version (or one that declares it compatible).
 */
import { describe, expect, it } from 'vitest';
import { defineAgent, defineTool, type ToolDefinition } from '../../src/index.ts';
import { RunIdTakenError, UnknownAgentError } from '../../src/errors.ts';
import { listQueuedRuns as listRuns } from '../../src/fleet/run-queue.ts';
import { raiseFleetRun, submitRun, Worker } from '../../src/postgres.ts';
import { migrate } from '../../src/store/pg/schema.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/testing.ts';
import { freshDatabase, postgresAvailable, usePostgres, withDb } from '../helpers/use-postgres.ts';
import type { Message } from '../../machines/agent-loop.types.ts';
import type pg from 'pg';

/** The customer a task names ("Invoice ACME."), for the scripted model's tool input. */
function customerOf(messages: readonly Message[]): string {
  const first = messages[0]!.content;
  const text = typeof first === 'string' ? first : JSON.stringify(first);
  return /Invoice (\w+)/.exec(text)?.[1] ?? 'nobody';
}

/** Invoices sent, by idempotency key: a second send under one key is the bug. */
class Outbox {
  readonly sends: string[] = [];
  count(key: string): number {
    return this.sends.filter((sent) => sent === key).length;
  }
}

function billingTools(outbox: Outbox, schemaExtra: Record<string, unknown> = {}): ToolDefinition[] {
  const lookup = defineTool<{ customer: string }>({
    name: 'lookup_customer',
    description: 'Look a customer up.',
    inputSchema: { type: 'object', properties: { customer: { type: 'string' } }, required: ['customer'] },
    readOnly: true,
    run: ({ customer }) => `${customer}: net 30`,
  });
  const send = defineTool<{ customer: string }>({
    name: 'send_invoice',
    description: 'Send an invoice.',
    inputSchema: { type: 'object', properties: { customer: { type: 'string' }, ...schemaExtra }, required: ['customer'] },
    readOnly: false,
    run: ({ customer }, ctx) => {
      outbox.sends.push(ctx.idempotencyKey);
      return `invoice sent to ${customer}`;
    },
    verify: (_input, ctx) => ({ happened: outbox.count(ctx.idempotencyKey) > 0 }),
  });
  return [lookup, send];
}

const billingScript = () => [
  (messages: readonly Message[]) => toolUseReply([{ id: 'toolu_1', name: 'lookup_customer', input: { customer: customerOf(messages) } }]),
  (messages: readonly Message[]) => toolUseReply([{ id: 'toolu_2', name: 'send_invoice', input: { customer: customerOf(messages) } }]),
  (messages: readonly Message[]) => endTurnReply(`Invoiced ${customerOf(messages)}.`),
];

function billing(outbox: Outbox, extra: { schemaExtra?: Record<string, unknown>; compatibleWith?: string[] } = {}) {
  return defineAgent({
    name: 'billing',
    model: scriptedModel(billingScript(), { name: 'scripted-billing' }),
    system: 'You send invoices.',
    tools: billingTools(outbox, extra.schemaExtra),
    ...(extra.compatibleWith ? { compatibleWith: extra.compatibleWith } : {}),
  });
}

function workerOf(pool: pg.Pool, agents: ReturnType<typeof billing>[], log: string[] = []) {
  return new Worker({ pool, agents, runConcurrency: 3, leaseMs: 60_000, exitWhenIdle: true, pollIntervalMs: 50, log: (line) => log.push(line) });
}

describe.skipIf(!postgresAvailable())('the fleet runs registered agents', () => {
  usePostgres({ prefix: 'agents' });

  it('submits tasks by id, runs each once with two workers, and a repeated submit creates nothing', async () => {
    const url = await freshDatabase();
    await withDb(url, async (db) => {
      await migrate(db);
      const outbox = new Outbox();
      const agent = billing(outbox);
      // No worker has registered billing yet: a submit is refused, unless asked to queue it for one to come.
      await expect(submitRun(db, { agent: 'billing', task: 'Invoice ACME.', runId: 'inv-0' })).rejects.toThrow(UnknownAgentError);
      const customers = ['ACME', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Stark'];
      const first = await submitRun(db, { agent: 'billing', task: `Invoice ${customers[0]}.`, runId: 'inv-0', allowUnknownAgent: true });
      expect(first).toMatchObject({ runId: 'inv-0', created: true });
      const status = (await listRuns(db)).find((run) => run.id === 'inv-0')!;
      expect(status.waitsForAgent).toMatch(/no worker has registered it/);
      for (let i = 1; i < customers.length; i++) await submitRun(db, { agent, task: `Invoice ${customers[i]}.`, runId: `inv-${i}` });
      // A client's retry: the same id, task and agent create nothing.
      expect(await submitRun(db, { agent, task: 'Invoice Globex.', runId: 'inv-1' })).toMatchObject({ runId: 'inv-1', created: false });
      await expect(submitRun(db, { agent, task: 'Invoice Globex twice.', runId: 'inv-1' })).rejects.toThrow(RunIdTakenError);

      await Promise.all([workerOf(db, [agent]).run(), workerOf(db, [billing(outbox)]).run()]);
      const runs = await listRuns(db);
      expect(runs.map((run) => [run.id, run.state, run.agent, run.agentVersion, run.waitsForAgent])).toEqual(
        customers.map((_, i) => [`inv-${i}`, 'done', 'billing', agent.version, null]),
      );
      expect(outbox.sends).toHaveLength(customers.length);
      expect(new Set(outbox.sends).size).toBe(customers.length);
    });
  });

  it('leaves runs started at one version to a worker with that version; one with another waits and says for what', async () => {
    const url = await freshDatabase();
    await withDb(url, async (db) => {
      await migrate(db);
      const outbox = new Outbox();
      const v1 = billing(outbox);
      const v2 = billing(outbox, { schemaExtra: { cc: { type: 'string' } } });
      expect(v2.version).not.toBe(v1.version);
      // Started by v1 and stopped after one turn: pinned to v1, resumable once raised.
      for (const id of ['old-1', 'old-2']) await submitRun(db, { agent: v1, task: 'Invoice ACME.', runId: id, maxTurns: 1 });
      await workerOf(db, [v1]).run();
      for (const id of ['old-1', 'old-2']) await raiseFleetRun(db, { run: id, maxTurns: 10, by: 'ana' });

      const log: string[] = [];
      await workerOf(db, [v2], log).run();
      expect(log.join('\n')).not.toMatch(/claimed/);
      const waiting = await listRuns(db);
      expect(waiting.map((run) => [run.state, run.agentVersion])).toEqual([
        ['stoppedAtMaxTurns', v1.version],
        ['stoppedAtMaxTurns', v1.version],
      ]);
      for (const run of waiting) expect(run.waitsForAgent).toBeNull(); // v1 was registered (by the first worker): a worker with it will come

      // A new run goes to v2 all the same.
      await submitRun(db, { agent: v2, task: 'Invoice Hooli.', runId: 'new-1' });
      await workerOf(db, [v2]).run();
      expect((await listRuns(db)).find((run) => run.id === 'new-1')).toMatchObject({ state: 'done', agentVersion: v2.version });

      await workerOf(db, [billing(outbox)]).run();
      const done = await listRuns(db);
      expect(done.map((run) => [run.id, run.state])).toEqual([
        ['old-1', 'done'],
        ['old-2', 'done'],
        ['new-1', 'done'],
      ]);
      expect(outbox.sends).toHaveLength(3);
    });
  });

  it('a run pinned to a version no worker ever registered says so; a definition that declares it compatible takes it up', async () => {
    const url = await freshDatabase();
    await withDb(url, async (db) => {
      await migrate(db);
      const outbox = new Outbox();
      const v1 = billing(outbox);
      await submitRun(db, { agent: v1, task: 'Invoice ACME.', runId: 'pinned', maxTurns: 1 });
      await workerOf(db, [v1]).run();
      await raiseFleetRun(db, { run: 'pinned', maxTurns: 10 });
      // Forget that v1 was ever registered (its workers are long gone).
      await db.query('DELETE FROM da_agents');
      const v2 = billing(outbox, { schemaExtra: { cc: { type: 'string' } } });
      await workerOf(db, [v2]).run();
      const [run] = await listRuns(db);
      expect(run!.waitsForAgent).toBe(`a worker with billing at version ${v1.version}, which it started with (registered: ${v2.version})`);
      await workerOf(db, [billing(outbox, { schemaExtra: { cc: { type: 'string' } }, compatibleWith: [v1.version] })]).run();
      expect((await listRuns(db))[0]).toMatchObject({ state: 'done', agentVersion: v1.version, waitsForAgent: null });
      expect(outbox.sends).toHaveLength(1);
    });
  });

  it('a run the worker cannot drive (its approval rule names a tool the agent lacks) is refused once and left alone, not claimed in a loop', async () => {
    const url = await freshDatabase();
    await withDb(url, async (db) => {
      await migrate(db);
      const agent = billing(new Outbox());
      // Given the definition, submit refuses the rule itself; given only the name, it cannot tell.
      await expect(submitRun(db, { agent, task: 'Invoice ACME.', runId: 'bad-rule', requireApproval: ['no_such_tool'] })).rejects.toThrow(/no_such_tool/);
      await submitRun(db, { agent: 'billing', task: 'Invoice ACME.', runId: 'bad-rule', requireApproval: ['no_such_tool'], allowUnknownAgent: true });
      const log: string[] = [];
      await workerOf(db, [agent], log).run();
      const refusals = log.filter((line) => line.includes('[ALERT] this worker cannot drive it'));
      expect(refusals).toHaveLength(1);
      expect(refusals[0]).toMatch(/no_such_tool/);
      expect((await listRuns(db))[0]).toMatchObject({ id: 'bad-rule', state: 'queued', finished: false });
    });
  });

  it('a claim sent before a run was refused, answered after its release, gives the run back instead of driving it again', async () => {
    const url = await freshDatabase();
    await withDb(url, async (db) => {
      await migrate(db);
      const agent = billing(new Outbox());
      await submitRun(db, { agent: 'billing', task: 'Invoice ACME.', runId: 'bad-rule', requireApproval: ['no_such_tool'], allowUnknownAgent: true });
      // The worker's second claim is held until the refused run's release has committed: the
      // claim then finds the run free, as it can when the database answers the two in that order.
      let claims = 0;
      let releaseDone!: () => void;
      const released = new Promise<void>((resolve) => (releaseDone = resolve));
      const gated = new Proxy(db, {
        get(target, property, receiver) {
          if (property !== 'query') return Reflect.get(target, property, receiver);
          return async (...args: Parameters<pg.Pool['query']>) => {
            const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text;
            if (text.startsWith('UPDATE da_runs SET lease_owner = $1') && ++claims === 2) await released;
            const answer = await (target.query as (...a: unknown[]) => Promise<unknown>)(...args);
            if (text.includes('SET lease_owner = NULL')) releaseDone();
            return answer;
          };
        },
      });
      const log: string[] = [];
      await workerOf(gated, [agent], log).run();
      expect(claims).toBeGreaterThanOrEqual(2);
      expect(log.filter((line) => line.includes('[ALERT] this worker cannot drive it'))).toHaveLength(1);
      expect((await listRuns(db))[0]).toMatchObject({ id: 'bad-rule', state: 'queued', finished: false });
    });
  });
});
