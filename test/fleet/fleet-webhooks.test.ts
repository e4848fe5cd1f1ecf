/**
 * Webhooks for the state changes of fleet runs, with a receiver on 127.0.0.1: every time a run
 * comes to rest (done, failed, cancelled, waiting for a person, stopped at a limit) arrives once
 * per event id, signed; a receiver that refuses gets the event again under the same id until it
 * takes it; one that hangs holds up no run, and its attempt times out and is retried; a worker
 * process SIGKILLed mid-delivery leaves its events to the next, so each arrives at least once and
 * deduplication by id gives exactly the set of changes. The secret is nowhere but in the
 * signatures' keys: not in the tables, the log lines or the error messages.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defineAgent } from '../../src/index.ts';
import { submitRun, verifyWebhookSignature, Worker, type WebhookEventBody } from '../../src/postgres.ts';
import { submitRuns, type DemoRunSpec } from '../../src/fleet/run-queue.ts';
import { FLEET_DONE_TEXT, scriptedDemoModel } from '../../src/fleet/worker.ts';
import { signWebhookRequest, WebhookDelivery, WebhookSettingsError } from '../../src/fleet/webhooks.ts';
import { cancelRun } from '../../src/runtime/cancel-run.ts';
import { runCli as runCliInProcess } from '../../src/cli/main.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { openDatabase, openPool } from '../../src/store/pg/pool.ts';
import { migrate } from '../../src/store/pg/schema.ts';
import { endTurnReply, scriptedModel, stopReply } from '../../src/testing.ts';
import { startCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';

const SECRET = 'whsec-test-6f1c0e9a54b2d7e3a8c1';
const DEMO: DemoRunSpec = { kind: 'demo', model: null, maxTurns: 20, paceMs: 0, jitterMs: 0 };

interface Received {
  /** Every header as received. */
  headers: http.IncomingHttpHeaders;
  eventId: string | undefined;
  signature: string | undefined;
  contentType: string | undefined;
  raw: string;
  body: WebhookEventBody;
}

/** What the receiver does with a request: answer with a status, or hold it open and answer nothing. */
type Answer = number | 'hang';

/** A webhook receiver on 127.0.0.1: records every request (once its body is in), answers as `answer` says. */
class Receiver {
  readonly received: Received[] = [];
  /** Requests held open, not answered. */
  readonly hanging = new Set<http.ServerResponse>();
  answer: (request: Received, index: number) => Answer = () => 200;
  private readonly server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      const request: Received = {
        headers: req.headers,
        eventId: req.headers['durable-agent-event-id'] as string | undefined,
        signature: req.headers['durable-agent-signature'] as string | undefined,
        contentType: req.headers['content-type'],
        raw,
        body: JSON.parse(raw) as WebhookEventBody,
      };
      this.received.push(request);
      const answer = this.answer(request, this.received.length - 1);
      if (answer === 'hang') {
        this.hanging.add(res);
        res.on('close', () => this.hanging.delete(res));
        return;
      }
      res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer >= 300 ? 'receiver down for maintenance' : 'ok');
    });
  });

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks/durable-agent`;
  }

  /** Deduplicated by event id, as a receiver does: the first body of each. */
  distinct(): Map<string, WebhookEventBody> {
    const byId = new Map<string, WebhookEventBody>();
    for (const { body } of this.received) if (!byId.has(body.id)) byId.set(body.id, body);
    return byId;
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const receivers: Receiver[] = [];
async function receiver(): Promise<Receiver> {
  const started = await new Receiver().start();
  receivers.push(started);
  return started;
}
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

interface EventRow {
  event_id: string;
  run_id: string;
  type: string;
  state: string;
  attempts: number;
  delivered: boolean;
  last_error: string | null;
  due: boolean;
}

async function events(db: pg.Pool): Promise<EventRow[]> {
  const { rows } = await db.query<EventRow>(
    `SELECT event_id, run_id, type, state, attempts, delivered_at IS NOT NULL AS delivered, last_error, next_attempt_at <= now() AS due FROM da_events ORDER BY id`,
  );
  return rows;
}

/** Everything the fleet stored, as text: where a secret must not be. */
async function storedText(db: pg.Pool): Promise<string> {
  const { rows } = await db.query<{ text: string }>(
    `SELECT coalesce((SELECT string_agg(e::text, E'\\n') FROM da_events e), '') || coalesce((SELECT string_agg(r::text, E'\\n') FROM da_runs r), '')
            || coalesce((SELECT string_agg(d.body, E'\\n') FROM da_records d), '') || coalesce((SELECT string_agg(c::text, E'\\n') FROM da_controls c), '') AS text`,
  );
  return rows[0]!.text;
}

function expectSigned(request: Received, secret = SECRET): void {
  expect(request.contentType).toBe('application/json');
  expect(request.eventId).toBe(request.body.id);
  expect(request.headers['durable-agent-event-type']).toBe(request.body.type);
  expect(request.signature).toMatch(/^t=\d+,v2=[0-9a-f]{64}$/);
  expect(verifyWebhookSignature(secret, request.headers, request.raw, { toleranceSeconds: 600 })).toMatchObject({ id: request.body.id, type: request.body.type });
  expect(verifyWebhookSignature(`${secret}-other`, request.headers, request.raw, { toleranceSeconds: 600 })).toBeNull();
}

function demoWorker(db: pg.Pool, log: string[], extra: Partial<ConstructorParameters<typeof Worker>[0]> = {}): Worker {
  return new Worker({
    pool: db,
    runConcurrency: 3,
    leaseMs: 60_000,
    exitWhenIdle: false,
    pollIntervalMs: 50,
    log: (line) => log.push(line),
    modelFor: async (spec) => scriptedDemoModel(spec),
    ...extra,
  } as ConstructorParameters<typeof Worker>[0]);
}

describe('the signature of a webhook request', () => {
  const body = '{"id":"e1","type":"run.done"}';

  it('is t=<unix seconds>,v2=<hex HMAC-SHA256 of "v2\\n<t>\\n<id>\\n<type>\\n<body>">: the event id and type are signed with the body, and a verify returns them', () => {
    const event = { id: 'e1', type: 'run.done', body };
    const header = signWebhookRequest(SECRET, event, 1_700_000_000);
    expect(header).toMatch(/^t=1700000000,v2=[0-9a-f]{64}$/);
    const headers = (signature: string | undefined, id = 'e1', type = 'run.done') => ({ 'durable-agent-signature': signature, 'durable-agent-event-id': id, 'durable-agent-event-type': type });
    expect(verifyWebhookSignature(SECRET, headers(header), body, { nowSeconds: 1_700_000_100 })).toEqual({ id: 'e1', type: 'run.done', timestamp: 1_700_000_000 });
    expect(verifyWebhookSignature(SECRET, headers(header), Buffer.from(body), { nowSeconds: 1_700_000_000 })).toMatchObject({ id: 'e1' });
    // A fetch Headers works as Node's headers do, in any case.
    expect(verifyWebhookSignature(SECRET, new Headers({ 'Durable-Agent-Signature': header, 'Durable-Agent-Event-Id': 'e1', 'Durable-Agent-Event-Type': 'run.done' }), body, { nowSeconds: 1_700_000_000 })).toMatchObject({ id: 'e1', type: 'run.done' });
    const refused = (given: Record<string, string | undefined>, raw: string = body, options = { nowSeconds: 1_700_000_000 } as { nowSeconds: number; toleranceSeconds?: number }) => verifyWebhookSignature(SECRET, given, raw, options);
    // Another event id or type on the same signature and body (a replay under a new id), or none.
    expect(refused(headers(header, 'e2'))).toBeNull();
    expect(refused(headers(header, 'e1', 'run.failed'))).toBeNull();
    expect(refused({ 'durable-agent-signature': header, 'durable-agent-event-type': 'run.done' })).toBeNull();
    expect(refused({ 'durable-agent-signature': header, 'durable-agent-event-id': 'e1' })).toBeNull();
    // Where the id ends and the type begins cannot be moved: an id or type with a line break is no id or type.
    expect(refused(headers(header, 'e1\nrun', 'done'))).toBeNull();
    // A changed body, another secret, a replay beyond the tolerance, a header that is not one, the old v1 scheme.
    expect(refused(headers(header), body.replace('done', 'failed'))).toBeNull();
    expect(verifyWebhookSignature('another-secret-of-length', headers(header), body, { nowSeconds: 1_700_000_000 })).toBeNull();
    expect(refused(headers(header), body, { nowSeconds: 1_700_000_301 })).toBeNull();
    expect(refused(headers(header), body, { nowSeconds: 1_700_000_100, toleranceSeconds: 60 })).toBeNull();
    expect(refused(headers(header.replace('t=1700000000', 't=1700000001')))).toBeNull();
    expect(refused(headers(header.replace('v2=', 'v1=')))).toBeNull();
    for (const bad of [undefined, '', 'v2=abc', 't=1700000000', `t=1700000000,v2=${'0'.repeat(63)}`, 'garbage']) expect(refused(headers(bad))).toBeNull();
    // Called the old way, with the signature header alone: not verified, never verified by accident.
    expect(verifyWebhookSignature(SECRET, header as never, body, { nowSeconds: 1_700_000_000 })).toBeNull();
  });

  it('refuses settings that could not sign or send (WebhookSettingsError), never quoting the secret or the URL', () => {
    const refused = (settings: { url: string; secret: string; timeoutMs?: number }) => {
      try {
        new WebhookDelivery({} as pg.Pool, settings, () => {});
      } catch (error) {
        return error as WebhookSettingsError;
      }
      throw new Error('not refused');
    };
    const short = refused({ url: 'https://hooks.example.com/x', secret: 'short-secret' });
    expect(short).toBeInstanceOf(WebhookSettingsError);
    expect(short).toMatchObject({ name: 'WebhookSettingsError', kind: 'refused', problem: 'the secret is shorter than 16 characters' });
    expect(short.message).not.toContain('short-secret');
    const ftp = refused({ url: 'ftp://user:pa55word-in-url@hooks.example.com/x', secret: SECRET });
    expect(ftp.problem).toBe('the URL is not http or https (it is ftp)');
    expect(ftp.message).not.toContain('pa55word-in-url');
    expect(ftp.message).not.toContain(SECRET);
    expect(refused({ url: 'not a url', secret: SECRET }).problem).toBe('the URL is not a URL');
    expect(refused({ url: 'https://hooks.example.com/x', secret: SECRET, timeoutMs: 5 }).problem).toMatch(/^timeoutMs is a whole number/);
  });

  it('worker --webhook-url: refused (exit 2, what to do) without DURABLE_AGENT_WEBHOOK_SECRET, with a short one, or with a URL that is not http(s)', async () => {
    const cli = async (argv: string[], env: NodeJS.ProcessEnv) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCliInProcess(argv, env, { out: (line) => out.push(line), err: (line) => err.push(line) });
      return { code, out: out.join('\n'), err: err.join('\n') };
    };
    const base = ['worker', '--database-url', 'postgresql://nobody@127.0.0.1:1/none', '--webhook-url', 'https://hooks.example.com/x'];
    const missing = await cli(base, {});
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('--webhook-url needs the secret that signs each event: set DURABLE_AGENT_WEBHOOK_SECRET');
    const short = await cli(base, { DURABLE_AGENT_WEBHOOK_SECRET: 'short-secret' });
    expect(short.code).toBe(2);
    expect(short.err).toContain('DURABLE_AGENT_WEBHOOK_SECRET is shorter than 16 characters');
    expect(short.err).not.toContain('short-secret');
    const ftp = await cli([...base.slice(0, -1), 'ftp://hooks.example.com/x'], { DURABLE_AGENT_WEBHOOK_SECRET: SECRET });
    expect(ftp.code).toBe(2);
    expect(ftp.err).toContain('--webhook-url is a ftp URL: give an http or https one.');
  });
});

describe.skipIf(!postgresAvailable())('webhooks for the state changes of fleet runs', () => {
  usePostgres({ prefix: 'hooks' });

  it('each state change arrives once per event id, signed: done, failed, waiting for a person, cancelled, stopped at max turns and at the budget', async () => {
    const hooks = await receiver();
    const db = await openDatabase(await freshDatabase(), 8);
    const log: string[] = [];
    let running: Promise<void> = Promise.resolve();
    try {
      const [done1, done2] = await submitRuns(db, DEMO, 2);
      const [waiting] = await submitRuns(db, { ...DEMO, requireApproval: ['write_report'] }, 1);
      const [maxTurns] = await submitRuns(db, { ...DEMO, maxTurns: 1 }, 1);
      const [budget] = await submitRuns(db, { ...DEMO, budget: { maxTotalTokens: 1 } }, 1);
      const greeter = defineAgent({ name: 'greeter', model: scriptedModel([endTurnReply('Hello from the greeter.')], { name: 'scripted-greeter' }), system: 'You greet.', tools: [] });
      const refuser = defineAgent({ name: 'refuser', model: scriptedModel([stopReply('refusal')], { name: 'scripted-refuser' }), system: 'You refuse.', tools: [] });
      await submitRun(db, { agent: greeter, task: 'Greet.', runId: 'greet-1' });
      await submitRun(db, { agent: refuser, task: 'Refuse.', runId: 'refuse-1' });

      const worker = demoWorker(db, log, { agents: [greeter, refuser], webhook: { url: hooks.url, secret: SECRET } });
      running = worker.run();
      const resting = [done1, done2, waiting, maxTurns, budget, 'greet-1', 'refuse-1'];
      await vi.waitFor(async () => expect((await events(db)).filter((e) => e.delivered).length >= resting.length, 'every run at rest and its event delivered').toBe(true), { timeout: 60_000, interval: 50 });
      // Cancelled by no worker (none drives a run that waits for a person): its event goes out all the same.
      await cancelRun({ store: new PgRunStore(db, waiting!), by: 'ana', reason: 'not needed' });
      await vi.waitFor(async () => expect((await events(db)).filter((e) => e.delivered).length >= resting.length + 1, 'the cancel delivered').toBe(true), { timeout: 60_000, interval: 50 });
      worker.stop('test over');
      await running;

      const rows = await events(db);
      const expected = [
        [done1, 'run.done', 'done'],
        [done2, 'run.done', 'done'],
        [waiting, 'run.waiting', 'awaitingDecision'],
        [waiting, 'run.cancelled', 'cancelled'],
        [maxTurns, 'run.max_turns_reached', 'stoppedAtMaxTurns'],
        [budget, 'run.budget_reached', 'stoppedAtBudget'],
        ['greet-1', 'run.done', 'done'],
        ['refuse-1', 'run.failed', 'failed'],
      ];
      const key = (row: readonly unknown[]) => row.join(' ');
      expect(rows.map((row) => key([row.run_id, row.type, row.state])).sort()).toEqual(expected.map(key).sort());
      expect(rows.every((row) => row.delivered && row.attempts === 0 && row.last_error === null)).toBe(true);
      // Once per event id, each request signed, its body the event's.
      expect(hooks.received).toHaveLength(rows.length);
      expect(new Set(hooks.received.map((r) => r.body.id))).toEqual(new Set(rows.map((row) => row.event_id)));
      for (const request of hooks.received) expectSigned(request);
      const bodies = hooks.distinct();
      for (const row of rows) expect(bodies.get(row.event_id)).toMatchObject({ id: row.event_id, type: row.type, run: row.run_id, state: row.state });
      const bodyOf = (run: string, type: string) => [...bodies.values()].find((body) => body.run === run && body.type === type)!;
      expect(bodyOf(done1!, 'run.done')).toMatchObject({ text: FLEET_DONE_TEXT });
      expect(bodyOf(done1!, 'run.done').agent).toBeUndefined();
      expect(bodyOf('greet-1', 'run.done')).toMatchObject({ agent: 'greeter', agentVersion: greeter.version, text: 'Hello from the greeter.' });
      expect(bodyOf('refuse-1', 'run.failed')).toMatchObject({ agent: 'refuser', failure: expect.stringContaining('refused') });
      expect(bodyOf(waiting!, 'run.waiting').text).toBeUndefined();
      expect(Date.parse(bodyOf(waiting!, 'run.cancelled').at)).toBeGreaterThanOrEqual(Date.parse(bodyOf(waiting!, 'run.waiting').at));

      expect(await storedText(db)).not.toContain(SECRET);
      expect(log.join('\n')).not.toContain(SECRET);
      expect(log.some((line) => line.includes('webhook: delivering the events of runs at rest to http://127.0.0.1:'))).toBe(true);
    } finally {
      await running;
      await db.end();
    }
  }, 120_000);

  it('a real delivery verifies; the same request replayed within the tolerance under another event id or type is refused', async () => {
    const hooks = await receiver();
    const db = await openDatabase(await freshDatabase(), 8);
    const log: string[] = [];
    let running: Promise<void> = Promise.resolve();
    try {
      await submitRuns(db, DEMO, 1);
      const worker = demoWorker(db, log, { webhook: { url: hooks.url, secret: SECRET } });
      running = worker.run();
      await vi.waitFor(() => expect(hooks.received.length, 'a delivery').toBeGreaterThan(0), { timeout: 60_000, interval: 50 });
      worker.stop('test over');
      await running;
      const [request] = hooks.received;
      expect(verifyWebhookSignature(SECRET, request!.headers, request!.raw)).toMatchObject({ id: request!.body.id, type: 'run.done' });
      // Captured and sent again at once, the body and signature as they were, a new id or another type.
      const replays = [
        { ...request!.headers, 'durable-agent-event-id': crypto.randomUUID() },
        { ...request!.headers, 'durable-agent-event-type': 'run.failed' },
      ];
      for (const headers of replays) expect(verifyWebhookSignature(SECRET, headers, request!.raw)).toBeNull();
    } finally {
      await running;
      await db.end();
    }
  }, 120_000);

  it('events belong to the endpoint they were made for: a worker with another URL leaves them, says so, and sends only its own', async () => {
    const [hooksA, hooksB] = [await receiver(), await receiver()];
    hooksA.answer = () => 500;
    const db = await openDatabase(await freshDatabase(), 8);
    const [logA, logB] = [[] as string[], [] as string[]];
    let running: Promise<void> = Promise.resolve();
    try {
      // A worker sending to A, which is down: the event of its run stays undelivered.
      const [first] = await submitRuns(db, DEMO, 1);
      const workerA = demoWorker(db, logA, { webhook: { url: hooksA.url, secret: SECRET } });
      running = workerA.run();
      await vi.waitFor(async () => expect((await events(db)).some((e) => e.attempts >= 1), 'a failed attempt to A').toBe(true), { timeout: 60_000, interval: 50 });
      workerA.stop('test: A is down');
      await running;

      // A worker sending to B: it sends the events made for B (from its start on), never A's.
      const workerB = demoWorker(db, logB, { webhook: { url: hooksB.url, secret: SECRET } });
      running = workerB.run();
      const [second] = await submitRuns(db, DEMO, 1);
      await vi.waitFor(() => expect(hooksB.received.length, "B's event of the second run").toBeGreaterThan(0), { timeout: 60_000, interval: 50 });
      // Time enough for a wrong delivery of the first run's event to show.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      workerB.stop('test over');
      await running;
      expect([...hooksB.distinct().values()].map((body) => `${body.run} ${body.type}`)).toEqual([`${second} run.done`]);
      const origin = new URL(hooksA.url).origin;
      expect(logB.some((line) => line.includes(`webhook: leaves 1 undelivered event of another endpoint (${origin}: 1) to the workers sending there; sends only the events made for ${new URL(hooksB.url).origin}`)), logB.join('\n')).toBe(true);

      // A up again, and a worker sending to it: the events made for A, the second run's too (A was an endpoint then), and nothing of B's.
      hooksA.answer = () => 200;
      const again = demoWorker(db, logA, { webhook: { url: hooksA.url, secret: SECRET } });
      running = again.run();
      await vi.waitFor(async () => expect((await events(db)).every((e) => e.delivered), 'every event delivered to its endpoint').toBe(true), { timeout: 60_000, interval: 50 });
      again.stop('test over');
      await running;
      expect([...hooksA.distinct().values()].map((body) => `${body.run} ${body.type}`).sort()).toEqual([`${first} run.done`, `${second} run.done`].sort());
      expect(hooksB.received.map((r) => r.body.run)).toEqual([second]);
      const ids = new Set([...hooksA.distinct().keys(), ...hooksB.distinct().keys()]);
      expect(ids.size).toBe(3);
    } finally {
      await running;
      await db.end();
    }
  }, 120_000);

  it('migrates a schema at version 11: the undelivered events made before belong to no endpoint, and a worker says so and sends none of them', async () => {
    const url = await freshDatabase();
    const pool11 = openPool(url, 2);
    try {
      expect(await migrate(pool11, 11)).toEqual({ from: 0, to: 11 });
      await pool11.query(`INSERT INTO da_runs (id, spec) VALUES ('old', '{"kind":"api"}')`);
      await pool11.query(`UPDATE da_runs SET state = 'failed' WHERE id = 'old'`);
      expect(await events(pool11)).toHaveLength(1);
    } finally {
      await pool11.end();
    }
    const hooks = await receiver();
    const db = await openDatabase(url, 8);
    const log: string[] = [];
    let running: Promise<void> = Promise.resolve();
    try {
      const worker = demoWorker(db, log, { webhook: { url: hooks.url, secret: SECRET } });
      running = worker.run();
      const [runId] = await submitRuns(db, DEMO, 1);
      await vi.waitFor(() => expect(hooks.received.length, 'the new run\'s event').toBeGreaterThan(0), { timeout: 60_000, interval: 50 });
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      worker.stop('test over');
      await running;
      expect(hooks.received.map((r) => r.body.run)).toEqual([runId]);
      expect(log.some((line) => line.includes('webhook: leaves 1 undelivered event made before events named their endpoint (schema 12): sent to no endpoint'))).toBe(true);
    } finally {
      await running;
      await db.end();
    }
  }, 120_000);

  it('a receiver that answers 500: the event comes again under the same id, and is marked delivered once taken', async () => {
    const hooks = await receiver();
    hooks.answer = (_, index) => (index < 2 ? 500 : 200);
    const db = await openDatabase(await freshDatabase(), 8);
    const log: string[] = [];
    let running: Promise<void> = Promise.resolve();
    try {
      const [runId] = await submitRuns(db, DEMO, 1);
      const worker = demoWorker(db, log, { webhook: { url: hooks.url.replace('http://', `http://hook-user:${'p4ss-in-the-url'}@`), secret: SECRET } });
      running = worker.run();
      await vi.waitFor(async () => expect((await events(db)).some((e) => e.delivered), 'the event delivered').toBe(true), { timeout: 60_000, interval: 50 });
      worker.stop('test over');
      await running;

      const [row, ...more] = await events(db);
      expect(more).toEqual([]);
      expect(row).toMatchObject({ run_id: runId, type: 'run.done', delivered: true, attempts: 2 });
      expect(row!.last_error).toBe('HTTP 500: receiver down for maintenance');
      expect(hooks.received).toHaveLength(3);
      expect(hooks.received.map((r) => r.body.id)).toEqual([row!.event_id, row!.event_id, row!.event_id]);
      for (const request of hooks.received) expectSigned(request);
      // Each attempt signed anew, the body the same.
      expect(new Set(hooks.received.map((r) => r.raw)).size).toBe(1);
      const failures = log.filter((line) => line.includes(`event ${row!.event_id}`) && line.includes('not delivered'));
      expect(failures).toHaveLength(2);
      expect(failures[0]).toMatch(/webhook: event \S+ \(run\.done of run \S+\): not delivered at attempt 1 \(HTTP 500: receiver down for maintenance\); next attempt in \d/);
      expect(log.some((line) => line.includes(`event ${row!.event_id}`) && line.includes('delivered at attempt 3'))).toBe(true);
      for (const text of [log.join('\n'), await storedText(db)]) {
        expect(text).not.toContain(SECRET);
        expect(text).not.toContain('p4ss-in-the-url');
      }
    } finally {
      await running;
      await db.end();
    }
  }, 120_000);

  it('a receiver that hangs holds up no run; a stopping worker leaves its sends to the next, whose attempt times out and is retried', async () => {
    const hooks = await receiver();
    hooks.answer = () => 'hang';
    const db = await openDatabase(await freshDatabase(), 8);
    const log: string[] = [];
    let running: Promise<void> = Promise.resolve();
    try {
      const ids = await submitRuns(db, DEMO, 3);
      // An attempt that may last ten minutes: the runs cannot be waiting for it.
      const first = demoWorker(db, log, { runConcurrency: 1, webhook: { url: hooks.url, secret: SECRET, timeoutMs: 600_000 } });
      running = first.run();
      await vi.waitFor(
        async () => {
          const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM da_runs WHERE state = 'done'`);
          expect(rows[0]!.n, 'all three runs done while their events hang').toBe(3);
        },
        { timeout: 60_000, interval: 50 },
      );
      await vi.waitFor(() => expect(hooks.hanging.size >= 1, 'the deliveries under way').toBe(true), { timeout: 60_000, interval: 50 });
      expect((await events(db)).filter((e) => e.delivered)).toEqual([]);
      first.stop('test: stop with sends under way');
      await running;
      // Its sends were cut short at the stop's bound and given back at once, not counted as attempts.
      const left = await events(db);
      expect(left).toHaveLength(3);
      expect(left.every((e) => !e.delivered && e.attempts === 0)).toBe(true);
      expect(left.filter((e) => !e.due)).toEqual([]);
      expect(log.some((line) => line.includes('the worker stopped during its delivery; left for the next worker to send again'))).toBe(true);

      // The next worker: the first request of each event hangs past its timeout, the retry is answered.
      const seen = new Set<string>();
      hooks.answer = (request) => {
        if (seen.has(request.body.id)) return 200;
        seen.add(request.body.id);
        return 'hang';
      };
      const second = demoWorker(db, log, { webhook: { url: hooks.url, secret: SECRET, timeoutMs: 1_000 } });
      running = second.run();
      await vi.waitFor(async () => expect((await events(db)).every((e) => e.delivered), 'every event delivered after a timed-out attempt').toBe(true), { timeout: 60_000, interval: 50 });
      second.stop('test over');
      await running;
      const rows = await events(db);
      expect(rows.map((row) => row.run_id).sort()).toEqual([...ids].sort());
      for (const row of rows) {
        expect(row).toMatchObject({ type: 'run.done', delivered: true, attempts: 1, last_error: 'no answer within 1.0 s' });
        // The stopped worker's cut-short attempt (for one of them), the timed-out one, the one taken.
        expect(hooks.received.filter((r) => r.body.id === row.event_id).length).toBeGreaterThanOrEqual(2);
      }
      for (const request of hooks.received) expectSigned(request);
      expect(log.join('\n')).not.toContain(SECRET);
      expect(await storedText(db)).not.toContain(SECRET);
    } finally {
      await running;
      await db.end();
    }
  }, 120_000);

  it('migrates a schema at version 7 to 8: a change of state from then on writes its event, one that rolls back writes none', async () => {
    const pool7 = openPool(await freshDatabase(), 2);
    try {
      expect(await migrate(pool7, 7)).toEqual({ from: 0, to: 7 });
      await pool7.query(`INSERT INTO da_runs (id, spec) VALUES ('old', '{"kind":"api"}')`);
      expect(await migrate(pool7, 8)).toEqual({ from: 7, to: 8 });
      await pool7.query(`UPDATE da_runs SET state = 'awaitingModel' WHERE id = 'old'`);
      const client = await pool7.connect();
      try {
        await client.query('BEGIN');
        await client.query(`UPDATE da_runs SET state = 'done' WHERE id = 'old'`);
        await client.query('ROLLBACK');
      } finally {
        client.release();
      }
      expect(await events(pool7)).toEqual([]);
      await pool7.query(`UPDATE da_runs SET state = 'failed' WHERE id = 'old'`);
      // No change, no event: the state written again as it was.
      await pool7.query(`UPDATE da_runs SET state = 'failed' WHERE id = 'old'`);
      expect((await events(pool7)).map((e) => [e.run_id, e.type, e.state, e.delivered, e.attempts])).toEqual([['old', 'run.failed', 'failed', false, 0]]);
    } finally {
      await pool7.end();
    }
  });

  it('a worker process SIGKILLed mid-delivery: another delivers its events, each at least once under one id; deduplicated, exactly the state changes', async () => {
    const hooks = await receiver();
    hooks.answer = () => 'hang';
    const url = await freshDatabase();
    const db = await openDatabase(url, 4);
    const env = { DURABLE_AGENT_WEBHOOK_SECRET: SECRET };
    const workerArgs = ['worker', '--database-url', url, '--webhook-url', hooks.url, '--lease', '2s', '--poll-interval', '100ms', '--run-concurrency', '2'];
    const children: ReturnType<typeof startCli>[] = [];
    try {
      const ids = await submitRuns(db, { ...DEMO, paceMs: 50 }, 6);
      const first = startCli(workerArgs, { cwd: tempDir(), env });
      children.push(first);
      await vi.waitFor(() => expect(hooks.hanging.size >= 1, 'a delivery under way').toBe(true), { timeout: 90_000, interval: 50 });
      first.child.kill('SIGKILL');
      const killed = await first.done;
      expect(killed.signal).toBe('SIGKILL');
      hooks.answer = () => 200;

      const second = startCli(workerArgs, { cwd: tempDir(), env });
      children.push(second);
      await vi.waitFor(
        async () => {
          const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM da_runs WHERE state = 'done'`);
          const rowsOf = await events(db);
          const what = 'every run done and every event delivered (a claim of the killed worker lapses after 30 s)';
          expect(rows[0]!.n === ids.length && rowsOf.length === ids.length && rowsOf.every((e) => e.delivered), what).toBe(true);
        },
        { timeout: 150_000, interval: 50 },
      );
      second.child.kill('SIGTERM');
      const stopped = await second.done;
      expect(stopped.code, stopped.stdout + stopped.stderr).toBe(0);

      const rows = await events(db);
      // One event id per state change, every one received, and deduplication by id gives exactly the changes.
      expect(rows.map((row) => `${row.run_id} ${row.type}`).sort()).toEqual(ids.map((id) => `${id} run.done`).sort());
      const bodies = hooks.distinct();
      expect(new Set(bodies.keys())).toEqual(new Set(rows.map((row) => row.event_id)));
      expect([...bodies.values()].map((body) => `${body.run} ${body.type}`).sort()).toEqual(ids.map((id) => `${id} run.done`).sort());
      // The event the killed worker was sending came again from the other, under the same id.
      expect(hooks.received.length).toBeGreaterThan(bodies.size);
      for (const request of hooks.received) {
        expectSigned(request);
        expect(request.body).toEqual(bodies.get(request.body.id));
      }
      for (const output of [killed.stdout, killed.stderr, stopped.stdout, stopped.stderr, await storedText(db)]) expect(output).not.toContain(SECRET);
      expect(stopped.stdout).toContain('webhook: delivering the events of runs at rest to http://127.0.0.1:');
    } finally {
      for (const child of children) if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
      await Promise.all(children.map((child) => child.done));
      await db.end();
    }
  }, 240_000);
});
