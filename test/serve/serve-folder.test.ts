/**
 * `durable-agent serve` over a folder, in this process (createServer), with agents whose model is
 * scripted: a start idempotent by id and by Idempotency-Key, a run's events followed live and
 * again after a reconnect by Last-Event-ID (every record once, in order, to the end), a decision
 * through the API, the tokens (none: 401, a read token on a write: 403, another tenant's run:
 * 404 and absent from the list), validation in words, no secret in any answer, the OpenAPI
 * document, CORS only for the origins given.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Caller, TokenCheck } from '../../src/access/caller.ts';
import { namedTokenCheck } from '../../src/access/token-checks.ts';
import { addToken } from '../../src/access/tokens-file.ts';
import { defineAgent } from '../../src/agent/agent-definition.ts';
import type { ApiRun } from '../../src/client/api-types.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { createServer, type RunningServer } from '../../src/serve/create-server.ts';
import { openRunsFolder } from '../../src/store/open-store.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { ApiClient, recordSeqs, seqOf } from './api-client.ts';

const SECRET = 'sk-test-never-leaves-0123456789abcdef';
const TOKENS: Record<string, Caller> = {
  'ana:steer-every-tenant-0001': { name: 'ana', role: 'steer', tenant: null },
  'rita:read-every-tenant-0002': { name: 'rita', role: 'read', tenant: null },
  'bob:steer-acme-only-000003': { name: 'bob', role: 'steer', tenant: 'acme' },
  'gina:read-globex-only-0004': { name: 'gina', role: 'read', tenant: 'globex' },
};
const tokens: TokenCheck = { callerOf: (header) => TOKENS[/^Bearer (.+)$/.exec(header ?? '')?.[1] ?? ''] ?? null };

const sendInvoice = defineTool({
  name: 'send_invoice',
  description: 'Send an invoice.',
  inputSchema: { type: 'object', properties: { customer: { type: 'string' } }, required: ['customer'] },
  readOnly: false,
  // What it returns holds a secret of the server's: no answer and no event may carry it.
  run: ({ customer }: { customer: string }) => `invoice sent to ${customer} with key ${SECRET}`,
});

const billing = defineAgent({
  name: 'billing',
  model: scriptedModel([toolUseReply([{ id: 'toolu_1', name: 'send_invoice', input: { customer: 'ACME' } }], 'Sending it.'), endTurnReply('Invoiced ACME.')], { name: 'scripted-billing' }),
  system: 'You send invoices.',
  tools: [sendInvoice],
  requireApproval: ['send_invoice'],
});
const greeter = defineAgent({ name: 'greeter', model: scriptedModel([endTurnReply('Hello.')], { name: 'scripted-greeter', paceMs: 5 }), tools: [] });

let server: RunningServer;
let dir: string;
const as = (token: string | null) => new ApiClient(server.url, token);
const ana = () => as('ana:steer-every-tenant-0001');

beforeAll(async () => {
  dir = tempDir();
  server = await createServer({ dir, agents: [billing, greeter], port: 0, tokens, secrets: [SECRET], corsOrigins: ['https://app.example.com'], heartbeatMs: 200, env: {} });
});
afterAll(async () => {
  await server?.close();
});

describe('serve over a folder', () => {
  it('starts a run once by id and once by Idempotency-Key; another task under the id is a conflict', async () => {
    const first = await ana().post('/v1/runs', { agent: 'greeter', task: 'Say hello.', runId: 'hello-1' });
    expect(first.status, first.text).toBe(201);
    expect(first.body.created).toBe(true);
    expect(first.body.run).toMatchObject({ runId: 'hello-1', source: 'folder', task: 'Say hello.', tenant: 'default', agent: { name: 'greeter' } });
    const again = await ana().post('/v1/runs', { agent: 'greeter', task: 'Say hello.', runId: 'hello-1' });
    expect(again.status, again.text).toBe(200);
    expect(again.body.created).toBe(false);
    const other = await ana().post('/v1/runs', { agent: 'greeter', task: 'Say goodbye.', runId: 'hello-1' });
    expect(other.status, other.text).toBe(409);
    expect(other.body.error.code).toBe('conflict');

    const keyed = await Promise.all([0, 1].map(() => ana().post('/v1/runs', { agent: 'greeter', task: 'Say hello twice.' }, { 'idempotency-key': 'order-77' })));
    expect(keyed.map((answer) => answer.status).sort()).toEqual([200, 201]);
    expect(keyed[0]!.body.run.runId).toBe(keyed[1]!.body.run.runId);
    const runs = openRunsFolder(path.join(dir, '.durable-agent')).entries().filter((entry) => !entry.archived);
    expect(runs.map((entry) => entry.folderId).sort()).toEqual([keyed[0]!.body.run.runId, 'hello-1'].sort());

    await vi.waitFor(async () => expect((await ana().get('/v1/runs/hello-1')).body.run.category).toBe('done'), { timeout: 30_000, interval: 50 });
    const done = (await ana().get('/v1/runs/hello-1')).body.run as ApiRun;
    expect(done).toMatchObject({ state: 'done', result: 'Hello.', problem: null });
  });

  it('follows a run live: its reply and call, the wait for approval, a decision through the API, the result, the end; a reconnect gets every later record once', async () => {
    const started = await ana().post('/v1/runs', { agent: 'billing', task: 'Invoice ACME.', runId: 'inv-1' });
    expect(started.status, started.text).toBe(201);
    const first = await ana().follow('inv-1', { stop: (event) => event.event.type === 'waiting' });
    const waiting = first.events.find((event) => event.event.type === 'waiting')!;
    expect(waiting.event).toMatchObject({ type: 'waiting', waitingOn: { kind: 'call', toolUseId: 'toolu_1', name: 'send_invoice', needs: 'approval' } });
    expect(first.events.map((event) => event.event.type)).toContain('tool-call');
    expect(first.events.find((event) => event.event.type === 'reply')!.event).toMatchObject({ text: 'Sending it.', supersedesDeltas: true });

    // A read token may not decide; a token that steers may.
    const refused = await as('rita:read-every-tenant-0002').post('/v1/runs/inv-1/decisions', { toolUseId: 'toolu_1', verdict: 'approve' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('forbidden');
    const decided = await ana().post('/v1/runs/inv-1/decisions', { toolUseId: 'toolu_1', verdict: 'approve' });
    expect(decided.status, decided.text).toBe(202);
    expect(decided.body).toEqual({ accepted: true, runId: 'inv-1' });

    const rest = await ana().follow('inv-1', { lastEventId: String(seqOf(waiting)) });
    expect(rest.ended).toBe(true);
    const all = [...first.events, ...rest.events];
    const end = all[all.length - 1]!.event;
    expect(end).toMatchObject({ type: 'end', state: 'done', category: 'done', result: 'Invoiced ACME.', problem: null });
    const result = all.find((event) => event.event.type === 'tool-result')!.event;
    expect(result).toMatchObject({ toolUseId: 'toolu_1', isError: false });
    expect(JSON.stringify(result)).toContain('[redacted]');
    expect(JSON.stringify(all)).not.toContain(SECRET);

    // Every record of the journal, once, in order.
    const loaded = await openRunsFolder(path.join(dir, '.durable-agent')).store('inv-1').load();
    expect(recordSeqs(all)).toEqual(loaded.records.map((stored) => stored.record.seq));
    // The journal says who decided: the token's name.
    expect(JSON.stringify(loaded.records.map((stored) => stored.record.decisions ?? null))).toContain('"by":"ana"');

    // After the end, a reconnect from the end gets nothing and the stream closes; from 3 on, the same events as before.
    const afterEnd = await ana().follow('inv-1', { lastEventId: String(end.type === 'end' ? end.seq : -1) });
    expect(afterEnd).toMatchObject({ events: [], ended: true });
    const fromThree = await ana().follow('inv-1', { lastEventId: '3' });
    expect(fromThree.events).toEqual(all.filter((event) => seqOf(event) > 3));
    // A record's id is on its last event only: a stream cut inside a record resumes before it.
    const recorded = all.filter((event) => seqOf(event) >= 0);
    for (const [at, event] of recorded.entries()) {
      const last = recorded[at + 1] === undefined || seqOf(recorded[at + 1]!) !== seqOf(event);
      expect(event.id, `event ${at} (${event.event.type} of record ${seqOf(event)})`).toBe(last ? String(seqOf(event)) : null);
    }
    const byQuery = await fetch(`${server.url}/v1/runs/inv-1/events?after=3`, { headers: ana().headers() });
    expect((await byQuery.text()).split('\n').find((line) => line.startsWith('id:'))).toBe('id: 4');
  });

  it('pauses, unpauses and cancels a run that waits (a cancel needs no body); a quiet stream says it is still there', async () => {
    expect((await ana().post('/v1/runs', { agent: 'billing', task: 'Invoice ACME again.', runId: 'inv-2' })).status).toBe(201);
    const waiting = await ana().follow('inv-2', { stop: (event) => event.event.type === 'waiting' });
    const lastId = String(seqOf(waiting.events[waiting.events.length - 1]!));
    // Nothing happens while it waits: the stream sends a comment now and then.
    const quiet = await ana().follow('inv-2', { lastEventId: lastId, stopAtComment: true });
    expect(quiet.events).toEqual([]);
    expect(quiet.comments).toContain('still here');

    expect((await ana().post('/v1/runs/inv-2/pause')).status).toBe(202);
    await vi.waitFor(async () => expect((await ana().get('/v1/runs/inv-2')).body.run).toMatchObject({ category: 'paused', pausedBy: 'ana' }), { timeout: 30_000, interval: 50 });
    expect((await ana().post('/v1/runs/inv-2/unpause')).status).toBe(202);
    await vi.waitFor(async () => expect((await ana().get('/v1/runs/inv-2')).body.run).toMatchObject({ category: 'waiting', pausedBy: null }), { timeout: 30_000, interval: 50 });
    const cancelled = await ana().post('/v1/runs/inv-2/cancel');
    expect(cancelled.status, cancelled.text).toBe(202);
    const rest = await ana().follow('inv-2', { lastEventId: lastId });
    expect(rest.ended).toBe(true);
    expect(rest.events[rest.events.length - 1]!.event).toMatchObject({ type: 'end', state: 'cancelled', category: 'cancelled', result: null, problem: 'cancelled by ana' });
    expect((await ana().get('/v1/runs/inv-2')).body.run).toMatchObject({ category: 'cancelled', problem: 'cancelled by ana' });
  });

  it('answers 401 without a token or with an unknown one, 404 for a run of another tenant, and leaves it out of lists', async () => {
    for (const client of [as(null), as('ana:not-the-secret')]) {
      const answer = await client.get('/v1/runs');
      expect(answer.status).toBe(401);
      expect(answer.body.error.code).toBe('unauthorized');
    }
    const bobs = await as('bob:steer-acme-only-000003').post('/v1/runs', { agent: 'greeter', task: 'Greet ACME.', runId: 'acme-1' });
    expect(bobs.status, bobs.text).toBe(201);
    expect(bobs.body.run.tenant).toBe('acme');
    const foreign = await as('bob:steer-acme-only-000003').post('/v1/runs', { agent: 'greeter', task: 'Greet.', runId: 'x-1', tenant: 'globex' });
    expect(foreign.status).toBe(403);

    const gina = as('gina:read-globex-only-0004');
    for (const route of ['/v1/runs/acme-1', '/v1/runs/hello-1']) {
      const answer = await gina.get(route);
      expect(answer.status).toBe(404);
      expect(answer.body.error.code).toBe('not-found');
    }
    expect((await gina.get('/v1/runs')).body).toEqual({ runs: [], next: null });
    expect((await fetch(`${server.url}/v1/runs/acme-1/events`, { headers: gina.headers() })).status).toBe(404);
    const bobList = (await as('bob:steer-acme-only-000003').get('/v1/runs')).body.runs as ApiRun[];
    expect(bobList.map((run) => run.runId)).toEqual(['acme-1']);
    expect((await as('bob:steer-acme-only-000003').post('/v1/runs/hello-1/cancel', {})).status).toBe(404);
    const all = (await as('rita:read-every-tenant-0002').get('/v1/runs')).body.runs as ApiRun[];
    expect(all.map((run) => run.runId)).toEqual(expect.arrayContaining(['acme-1', 'hello-1', 'inv-1']));
  });

  it('pages the list by its cursor, newest first, each run once; filters by state', async () => {
    for (let i = 0; i < 5; i++) expect((await ana().post('/v1/runs', { agent: 'greeter', task: `Greet ${i}.`, runId: `page-${i}` })).status).toBe(201);
    await vi.waitFor(async () => expect(((await ana().get('/v1/runs?state=running')).body.runs as ApiRun[]).length).toBe(0), { timeout: 30_000, interval: 50 });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await ana().get(`/v1/runs?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status, page.text).toBe(200);
      expect(page.body.runs.length).toBeLessThanOrEqual(2);
      seen.push(...(page.body.runs as ApiRun[]).map((run) => run.runId));
      cursor = page.body.next;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    const all = ((await ana().get('/v1/runs?limit=500')).body.runs as ApiRun[]).map((run) => run.runId);
    expect(seen).toEqual(all);
    const done = (await ana().get('/v1/runs?state=done&limit=500')).body.runs as ApiRun[];
    expect(done.every((run) => run.category === 'done' && run.result !== null)).toBe(true);
    expect(done.map((run) => run.runId)).toEqual(expect.arrayContaining(['page-0', 'page-4', 'inv-1']));
  });

  it('refuses what its schemas refuse, in words (400 invalid), a body over 1 MiB (413), and says which agents it drives', async () => {
    const bad = await ana().post('/v1/runs', { agent: 'greeter', task: '' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid');
    expect(bad.body.error.message).toMatch(/task: /);
    const verdict = await ana().post('/v1/runs/hello-1/decisions', { toolUseId: 'toolu_1', verdict: 'maybe' });
    expect(verdict.status).toBe(400);
    expect(verdict.body.error.message).toMatch(/verdict: /);
    const badId = await ana().get('/v1/runs/has%20space');
    expect(badId.status).toBe(400);
    const state = await ana().get('/v1/runs?state=sleeping');
    expect(state.status).toBe(400);
    const unknown = await ana().post('/v1/runs', { agent: 'nobody', task: 'x' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('billing, greeter');
    const big = await ana().post('/v1/runs/hello-1/signals', { name: 'x', data: 'y'.repeat(1024 * 1024 + 10) });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('too-large');
    const malformed = await fetch(`${server.url}/v1/runs`, { method: 'POST', headers: ana().headers({ 'content-type': 'application/json' }), body: '{"agent":' });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: { code: string } }).error.code).toBe('invalid');
    expect((await ana().get(`/v1/runs/${'a'.repeat(129)}`)).status).toBe(400);
    const otherTenant = await ana().post('/v1/runs', { agent: 'greeter', task: 'Say hello.', runId: 'hello-1', tenant: 'acme' });
    expect(otherTenant.status).toBe(409);
    expect(otherTenant.body.error.message).toContain('tenant');
    const notWaiting = await ana().post('/v1/runs/hello-1/decisions', { toolUseId: 'toolu_9', verdict: 'deny' });
    expect(notWaiting.status).toBe(409);
    expect(notWaiting.body.error.code).toBe('conflict');
  });

  it('serves its OpenAPI 3.1 document without a token: every route, its answers and the schemas of the wire format', async () => {
    const answer = await fetch(`${server.url}/v1/openapi.json`);
    expect(answer.status).toBe(200);
    const doc = (await answer.json()) as { openapi: string; paths: Record<string, Record<string, { responses: Record<string, unknown>; security?: unknown }>>; components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> } };
    expect(doc.openapi).toBe('3.1.0');
    const routes: Array<[string, string, string[]]> = [
      ['/v1/runs', 'post', ['200', '201', '400', '401', '403', '409', '413']],
      ['/v1/runs', 'get', ['200', '400', '401']],
      ['/v1/runs/{id}', 'get', ['200', '401', '404']],
      ['/v1/runs/{id}/events', 'get', ['200', '401', '404']],
      ...(['decisions', 'answers', 'signals', 'cancel', 'pause', 'unpause'] as const).map((path): [string, string, string[]] => [`/v1/runs/{id}/${path}`, 'post', ['202', '401', '403', '404', '409']]),
    ];
    for (const [route, method, statuses] of routes) {
      const operation = doc.paths[route]?.[method];
      expect(operation, `${method} ${route}`).toBeDefined();
      for (const status of statuses) expect(operation!.responses[status], `${method} ${route} ${status}`).toBeDefined();
      expect(operation!.security).toEqual([{ bearer: [] }]);
    }
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['Run', 'StartRunBody', 'StartRunAnswer', 'ListRunsAnswer', 'DecisionBody', 'AnswerBody', 'SignalBody', 'SteerAnswer', 'ErrorBody', 'RunEvent']));
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    // Every reference names a schema the document holds.
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((match) => match[1]!);
    expect(refs.length).toBeGreaterThan(10);
    for (const ref of refs) expect(doc.components.schemas[ref.replace('#/components/schemas/', '')], ref).toBeDefined();
    // The one route without a token is this document.
    expect(doc.paths['/v1/openapi.json']).toBeUndefined();

    // Its schemas are JSON Schema 2020-12 (OpenAPI 3.1's dialect): compiled, and the server's own answers hold to them.
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addSchema({ ...doc, $id: 'https://durable-agent.invalid/openapi.json' });
    const schemaOf = (name: string) => ajv.getSchema(`https://durable-agent.invalid/openapi.json#/components/schemas/${name}`)!;
    for (const name of Object.keys(doc.components.schemas)) expect(schemaOf(name), name).toBeTypeOf('function');
    const answers: Array<[string, unknown]> = [
      ['GetRunAnswer', (await ana().get('/v1/runs/inv-1')).body],
      ['ListRunsAnswer', (await ana().get('/v1/runs?limit=3')).body],
      ['StartRunAnswer', (await ana().post('/v1/runs', { agent: 'greeter', task: 'Say hello.', runId: 'hello-1' })).body],
      ['ErrorBody', (await as(null).get('/v1/runs')).body],
      ['SteerAnswer', { accepted: true, runId: 'inv-1' }],
    ];
    for (const [name, body] of answers) {
      const validate = schemaOf(name);
      expect(validate(body), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    expect(schemaOf('Run')({ runId: 'x' })).toBe(false);
    const events = (await ana().follow('inv-1')).events.map((event) => event.event);
    expect(events.length).toBeGreaterThan(5);
    for (const event of events) expect(schemaOf('RunEvent')(event), JSON.stringify(event)).toBe(true);
  });

  it('answers CORS for the origins given only', async () => {
    const preflight = (origin: string) =>
      fetch(`${server.url}/v1/runs`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' } });
    const allowed = await preflight('https://app.example.com');
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    const other = await preflight('https://evil.example');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('the token of DURABLE_AGENT_API_TOKEN', () => {
  it('names a caller that steers every tenant; anything else is no caller; a malformed one is refused', async () => {
    const check = namedTokenCheck('ana:0123456789abcdef0123', 'DURABLE_AGENT_API_TOKEN');
    expect(check.callerOf('Bearer ana:0123456789abcdef0123')).toEqual({ name: 'ana', role: 'steer', tenant: null });
    for (const header of [undefined, '', 'Bearer ana:0123456789abcdef012', 'ana:0123456789abcdef0123', 'Basic ana:0123456789abcdef0123']) expect(check.callerOf(header)).toBeNull();
    for (const bad of ['no-colon-0123456789abcdef', ':0123456789abcdef0123', 'ana:short']) expect(() => namedTokenCheck(bad, 'DURABLE_AGENT_API_TOKEN')).toThrow(/DURABLE_AGENT_API_TOKEN is not NAME:SECRET/);
    await expect(createServer({ dir: tempDir(), port: 0, env: {} })).rejects.toThrow(/DURABLE_AGENT_API_TOKEN=NAME:SECRET/);
  });

  it('a tokens file serves alone or beside it: its read token reads and cannot steer, its tenant token sees its tenant only; a file open to others starts nothing', async () => {
    const dir = tempDir();
    const file = path.join(tempDir(), 'tokens.json');
    const reader = addToken(file, { name: 'reader', role: 'read', tenant: null }).token;
    const acme = addToken(file, { name: 'acme-ops', role: 'steer', tenant: 'acme' }).token;
    const running = await createServer({ dir, agents: [greeter], port: 0, env: {}, tokensFile: file });
    try {
      const asAcme = new ApiClient(running.url, acme);
      const started = await asAcme.post('/v1/runs', { agent: greeter.name, task: 'Greet acme.', runId: 'for-acme' });
      expect(started.status).toBe(201);
      expect((started.body as { run: { tenant: string } }).run.tenant).toBe('acme');
      const asReader = new ApiClient(running.url, reader);
      expect((await asReader.get('/v1/runs/for-acme')).status).toBe(200);
      expect((await asReader.post('/v1/runs/for-acme/cancel', {})).status).toBe(403);
      expect((await asReader.post('/v1/runs', { agent: greeter.name, task: 'Greet.' })).status).toBe(403);
      expect((await new ApiClient(running.url, 'ana:not-a-token-of-the-file').get('/v1/runs')).status).toBe(401);
    } finally {
      await running.close();
    }
    fs.chmodSync(file, 0o644);
    await expect(createServer({ dir, agents: [greeter], port: 0, env: {}, tokensFile: file })).rejects.toThrow(/chmod 600/);
  });

  it('is never in an answer', async () => {
    const token = 'ana:the-token-is-a-secret-42';
    const running = await createServer({ dir: tempDir(), agents: [greeter], port: 0, env: { DURABLE_AGENT_API_TOKEN: token } });
    try {
      const client = new ApiClient(running.url, token);
      const answer = await client.post('/v1/runs', { agent: 'greeter', task: `Repeat ${token.split(':')[1]}`, runId: 'echo-1' });
      expect(answer.status, answer.text).toBe(201);
      expect(answer.text).not.toContain('the-token-is-a-secret-42');
      expect(answer.text).toContain('[redacted]');
    } finally {
      await running.close();
    }
  });
});

// The folder's journals stay for a look after a failure; tempDir removes them at exit.
afterAll(() => fs.existsSync(dir));
