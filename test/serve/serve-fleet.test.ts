/**
 * `durable-agent serve --database-url URL` over a fleet of two real worker processes, their
 * agent's model a real model name answered by a fake Messages API on 127.0.0.1: two starts with
 * one run id (and two with one Idempotency-Key) queue one run each; a client follows a run's
 * events (the model's text as it streams on the worker, through NOTIFY, then the recorded
 * reply); the worker driving it is SIGKILLed mid-run; the client reconnects with its last event
 * id and gets every later record once (the journal's, no gap, no duplicate) and the end, written
 * by the other worker.
 */
import fs from 'node:fs';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { TokenCheck } from '../../src/access/caller.ts';
import { defineAgent } from '../../src/agent/agent-definition.ts';
import { registerAgents } from '../../src/fleet/agent-registry.ts';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { createServer } from '../../src/serve/create-server.ts';
import { openDatabaseStore } from '../../src/store/pg/open-database-store.ts';
import { startCli } from '../helpers/cli.ts';
import { assistantTurns, FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, postgresAvailable, usePostgres, withDb } from '../helpers/use-postgres.ts';
import { type Answer, ApiClient, type ReceivedEvent, recordSeqs } from './api-client.ts';
import { writeAgentsModule } from './serve-agents.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
const TOKEN = 'ana:serve-fleet-token-0123456789';
const USAGE = { input: 60, output: 20, cacheRead: 0, cacheWrite: 0 };
const MODULE = writeAgentsModule('serve-fleet-agents');
afterAll(() => fs.rmSync(MODULE, { force: true }));

describe.skipIf(!postgresAvailable())('durable-agent serve --database-url', () => {
  usePostgres({ prefix: 'serve_fleet' });

  it('one run per id and per Idempotency-Key; a follower reconnecting after the SIGKILL of the worker driving its run gets every later record once, to the end', async () => {
    const url = await freshDatabase();
    const cwd = tempDir();
    // ACME's first reply streams its text once a client follows the run; its second model call
    // hangs until the worker driving it is killed.
    let killed = false;
    let connected!: () => void;
    const following = new Promise<void>((resolve) => (connected = resolve));
    const api = new FakeAnthropic((request) => {
      const customer = /Invoice (\w+)/.exec(JSON.stringify(request.body.messages[0]!.content))?.[1] ?? 'nobody';
      const first = { ...toolUseReply([{ id: 'toolu_01', name: 'send_invoice', input: { customer } }], `Sending the invoice to ${customer} now.`), usage: USAGE };
      if (assistantTurns(request) === 0) return customer === 'ACME' ? { stream: first, chunk: 4, holdAt: { event: 0, until: following } } : { reply: first };
      return killed || customer !== 'ACME' ? { reply: { ...endTurnReply(`Invoice sent to ${customer}.`), usage: USAGE } } : { hang: true };
    });
    const base = await api.start();
    const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: base, DURABLE_AGENT_API_TOKEN: TOKEN };
    const worker = () => startCli(['worker', '--database-url', url, '--agents', MODULE, '--lease', '1s', '--poll-interval', '100ms'], { cwd, env });
    const workers = [worker(), worker()];
    const serve = startCli(['serve', '--database-url', url, '--port', '0'], { cwd, env });
    try {
      await vi.waitFor(() => expect(workers.every((w) => w.output().includes(', billing@')), workers.map((w) => w.output()).join('\n')).toBe(true), { timeout: 30_000, interval: 50 });
      const base = await vi.waitFor(
        () => {
          const found = /\[serve\] (http:\/\/127\.0\.0\.1:\d+) /.exec(serve.output());
          if (!found) throw new Error(`serve has not said where it listens yet: ${serve.output()}`);
          return found[1]!;
        },
        { timeout: 30_000, interval: 50 },
      );
      const client = new ApiClient(base, TOKEN);

      const starts = await Promise.all([0, 1].map(() => client.post('/v1/runs', { agent: 'billing', task: 'Invoice ACME.', runId: 'inv-f' })));
      expect(starts.map((answer) => answer.status).sort()).toEqual([200, 201]);
      expect(starts[0]!.body.run).toMatchObject({ runId: 'inv-f', source: 'fleet', task: 'Invoice ACME.' });
      const keyed: Answer[] = [];
      for (let i = 0; i < 2; i++) keyed.push(await client.post('/v1/runs', { agent: 'billing', task: 'Invoice Globex.' }, { 'idempotency-key': 'order-9' }));
      expect(keyed.map((answer) => answer.status)).toEqual([201, 200]);
      expect(keyed[1]!.body.run.runId).toBe(keyed[0]!.body.run.runId);
      const conflict = await client.post('/v1/runs', { agent: 'billing', task: 'Invoice someone else.', runId: 'inv-f' });
      expect(conflict.status).toBe(409);
      await withDb(url, async (db) => expect((await db.query('SELECT id FROM da_runs ORDER BY id')).rows.map((row) => row.id)).toEqual([keyed[0]!.body.run.runId, 'inv-f'].sort()));

      // One client stays connected through the kill; another follows inv-f until its invoice is out
      // (its next model call hangs), the worker that drives it is killed, and it reconnects.
      const throughout = client.follow('inv-f');
      let lastId: string | null = null;
      const types = new Set<string>();
      const texts: string[] = [];
      const before = await client.follow('inv-f', {
        onEvent: (event) => {
          connected();
          types.add(event.event.type);
          if (event.event.type === 'text-delta') texts.push(event.event.text);
          if (event.id !== null) lastId = event.id;
        },
        // The text comes by another way than the records (a NOTIFY): it may come after them.
        stop: () => {
          const seen = texts.join('');
          return types.has('tool-result') && seen === 'Sending the invoice to ACME now.';
        },
      });
      // The model's text as it streamed on the worker, through the database: no id, the reply's text.
      const deltas = before.events.filter((event) => event.event.type === 'text-delta');
      expect(deltas.length).toBeGreaterThan(0);
      expect(deltas.every((event) => event.id === null)).toBe(true);
      expect(deltas.map((event) => (event.event.type === 'text-delta' ? event.event.text : '')).join('')).toBe('Sending the invoice to ACME now.');
      expect(before.events.find((event) => event.event.type === 'reply')!.event).toMatchObject({ text: 'Sending the invoice to ACME now.' });
      const driver = workers.find((w) => w.output().includes('run inv-f: claimed'))!;
      expect(driver).toBeDefined();
      driver.child.kill('SIGKILL');
      await driver.done;
      killed = true;

      const after = await client.follow('inv-f', { lastEventId: lastId });
      expect(after.ended).toBe(true);
      const recorded = (events: ReceivedEvent[]) => events.filter((event) => event.id !== null);
      const all = [...recorded(before.events), ...recorded(after.events)];
      const journal = await withDb(url, (db) => openDatabaseStore(db, 'inv-f').load());
      expect(recordSeqs(all)).toEqual(journal.records.map((stored) => stored.record.seq));
      const stayed = await throughout;
      expect(stayed.ended).toBe(true);
      expect(stayed.events.filter((event) => event.id !== null)).toEqual(all);
      expect(after.events[after.events.length - 1]!.event).toMatchObject({ type: 'end', state: 'done', category: 'done', result: 'Invoice sent to ACME.' });
      // The other worker finished it, under a later lease.
      const survivor = workers.find((w) => w !== driver)!;
      expect(survivor.output()).toMatch(/run inv-f: claimed \(lease epoch [2-9]/);
      expect(fs.readFileSync(`${cwd}/outbox.txt`, 'utf8').split('\n').filter((line) => line.startsWith('ACME'))).toHaveLength(1);
      const run = await client.get('/v1/runs/inv-f');
      expect(run.body.run).toMatchObject({ state: 'done', result: 'Invoice sent to ACME.', source: 'fleet' });
      const listed = await client.get('/v1/runs?state=done');
      expect((listed.body.runs as Array<{ runId: string }>).map((r) => r.runId)).toContain('inv-f');
      expect(JSON.stringify([before, after, run.body, listed.body])).not.toContain(KEY);
    } finally {
      for (const child of [serve, ...workers]) child.child.kill('SIGTERM');
      await Promise.all([serve.done, ...workers.map((w) => w.done)]);
      await api.stop();
    }
  }, 180_000);

  it('tokens over a fleet: a read token may not start or cancel (403), a tenant token sees its tenant\'s runs only (another\'s: 404, absent from lists)', async () => {
    const url = await freshDatabase();
    const tokens: TokenCheck = {
      callerOf: (header) =>
        ({
          'Bearer ana:all-0123456789abcdef': { name: 'ana', role: 'steer', tenant: null },
          'Bearer rita:read-0123456789abcdef': { name: 'rita', role: 'read', tenant: null },
          'Bearer bob:acme-0123456789abcdef': { name: 'bob', role: 'steer', tenant: 'acme' },
          'Bearer gina:globex-0123456789abcd': { name: 'gina', role: 'steer', tenant: 'globex' },
        })[header ?? ''] ?? null,
    } as TokenCheck;
    const running = await createServer({ databaseUrl: url, tokens, port: 0, env: {} });
    try {
      await withDb(url, (db) => registerAgents(db, [defineAgent({ name: 'billing', model: 'claude-sonnet-5-5', tools: [] })], 'test'));
      const as = (token: string | null) => new ApiClient(running.url, token);
      expect((await as(null).get('/v1/runs')).status).toBe(401);
      const read = await as('rita:read-0123456789abcdef').post('/v1/runs', { agent: 'billing', task: 'Invoice ACME.' });
      expect(read.status).toBe(403);
      expect(read.body.error.code).toBe('forbidden');
      const bobs = await as('bob:acme-0123456789abcdef').post('/v1/runs', { agent: 'billing', task: 'Invoice ACME.', runId: 'acme-run' });
      expect(bobs.status, bobs.text).toBe(201);
      expect(bobs.body.run).toMatchObject({ tenant: 'acme', source: 'fleet', category: 'running' });
      expect((await as('rita:read-0123456789abcdef').post('/v1/runs/acme-run/cancel', {})).status).toBe(403);
      const gina = as('gina:globex-0123456789abcd');
      expect((await gina.get('/v1/runs/acme-run')).status).toBe(404);
      expect((await gina.post('/v1/runs/acme-run/pause')).status).toBe(404);
      expect((await gina.get('/v1/runs')).body).toEqual({ runs: [], next: null });
      expect(((await as('ana:all-0123456789abcdef').get('/v1/runs?tenant=acme')).body.runs as Array<{ runId: string }>).map((run) => run.runId)).toEqual(['acme-run']);
      expect((await as('ana:all-0123456789abcdef').get('/v1/runs?tenant=globex')).body.runs).toEqual([]);
      // Queued, not yet started by a worker: nothing can be sent to it yet.
      const early = await as('bob:acme-0123456789abcdef').post('/v1/runs/acme-run/signals', { name: 'go' });
      expect(early.status).toBe(409);
      const unknown = await as('ana:all-0123456789abcdef').post('/v1/runs', { agent: 'nobody', task: 'x' });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.message).toContain('No worker of this fleet has registered an agent named "nobody"');
    } finally {
      await running.close();
    }
  });
});
