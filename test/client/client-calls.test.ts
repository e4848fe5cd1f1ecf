/**
 * The client's plain calls against a fake server: the paths, bodies and headers it sends (the
 * token, an idempotency key), the answers it reads, pages followed to the end, error answers
 * read into ApiError, and which requests are tried again when the API is out of reach.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ApiRun } from '../../src/client/api-types.ts';
import { ApiError, ApiUnreachableError, createClient, type FetchLike } from '../../src/client/index.ts';
import { apiError, type FakeApi, type Handler, json, startFakeApi } from './fake-api.ts';

const run = (runId: string, extra: Partial<ApiRun> = {}): ApiRun => ({
  runId,
  source: 'folder',
  state: 'done',
  category: 'done',
  task: `task of ${runId}`,
  turn: 2,
  maxTurns: 50,
  tokens: 1200,
  costUsd: 0.01,
  updatedAt: 1_700_000_000_000,
  waitsFor: null,
  waitingOn: null,
  agent: { name: 'billing', version: '1' },
  pausedBy: null,
  tenant: 'default',
  result: 'ok',
  problem: null,
  ...extra,
});

let api: FakeApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function serve(handler: Handler): Promise<FakeApi> {
  api = await startFakeApi(handler);
  return api;
}

/** A sleep that waits no time and writes down how long it was asked to wait. */
function recordingSleep(): { waits: number[]; sleep: (ms: number) => Promise<void> } {
  const waits: number[] = [];
  return { waits, sleep: async (ms) => void waits.push(ms) };
}

describe('the client’s calls', () => {
  it('startRun posts the body with the idempotency key given, and reads created', async () => {
    const fake = await serve((_request, response) => json(response, 201, { run: run('r1', { state: 'awaitingModel', category: 'running' }), created: true }));
    const client = createClient({ baseUrl: `${fake.baseUrl}/`, token: 'tok' });
    const answer = await client.startRun({ agent: 'billing', task: 'invoice ACME' }, { idempotencyKey: 'key-1' });
    expect(answer).toEqual({ run: run('r1', { state: 'awaitingModel', category: 'running' }), created: true });
    const [sent] = fake.requests;
    expect([sent!.method, sent!.url]).toEqual(['POST', '/v1/runs']);
    expect(JSON.parse(sent!.body)).toEqual({ agent: 'billing', task: 'invoice ACME' });
    expect(sent!.headers).toMatchObject({ 'idempotency-key': 'key-1', authorization: 'Bearer tok', 'content-type': 'application/json' });
  });

  it('startRun makes a key when none is given, and its retries send the same one', async () => {
    let answered = 0;
    const fake = await serve((_request, response) => (answered++ < 2 ? apiError(response, 503, 'internal', 'busy') : json(response, 200, { run: run('r1'), created: false })));
    const { waits, sleep } = recordingSleep();
    const client = createClient({ baseUrl: fake.baseUrl, retry: { sleep, random: () => 0 } });
    expect((await client.startRun({ agent: 'billing', task: 't' })).created).toBe(false);
    const keys = fake.requests.map((request) => request.headers['idempotency-key']);
    expect(keys).toHaveLength(3);
    expect(keys[0]).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(keys).size).toBe(1);
    expect(waits).toEqual([250, 500]);
    await client.startRun({ agent: 'billing', task: 't' });
    expect(fake.requests[3]!.headers['idempotency-key']).not.toBe(keys[0]);
  });

  it('getRun reads the run; the id is escaped in the path', async () => {
    const fake = await serve((_request, response) => json(response, 200, { run: run('a/b c') }));
    expect(await createClient({ baseUrl: fake.baseUrl }).getRun('a/b c')).toEqual(run('a/b c'));
    expect(fake.requests[0]!.url).toBe('/v1/runs/a%2Fb%20c');
    expect(fake.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('listRuns sends its filter as the query; listAllRuns follows next to the last page', async () => {
    const all = ['r5', 'r4', 'r3', 'r2', 'r1'].map((id) => run(id, { category: 'waiting', tenant: 'acme' }));
    const fake = await serve((request, response) => {
      const query = new URL(request.url, 'http://x').searchParams;
      const from = Number(query.get('cursor') ?? 0);
      const limit = Number(query.get('limit') ?? 100);
      const next = from + limit < all.length ? String(from + limit) : null;
      json(response, 200, { runs: all.slice(from, from + limit), next });
    });
    const client = createClient({ baseUrl: fake.baseUrl });
    expect(await client.listRuns({ state: 'waiting', tenant: 'acme', limit: 2 })).toEqual({ runs: all.slice(0, 2), next: '2' });
    expect(fake.requests[0]!.url).toBe('/v1/runs?state=waiting&tenant=acme&limit=2');

    const seen: string[] = [];
    for await (const each of client.listAllRuns({ state: 'waiting', limit: 2 })) seen.push(each.runId);
    expect(seen).toEqual(['r5', 'r4', 'r3', 'r2', 'r1']);
    expect(fake.requests.slice(1).map((request) => request.url)).toEqual(['/v1/runs?state=waiting&limit=2', '/v1/runs?state=waiting&cursor=2&limit=2', '/v1/runs?state=waiting&cursor=4&limit=2']);

    const fromCursor: string[] = [];
    for await (const each of client.listAllRuns({ cursor: '3', limit: 10 })) fromCursor.push(each.runId);
    expect(fromCursor).toEqual(['r2', 'r1']);
  });

  it('steers a run: decide, answer, signal, cancel, pause, unpause, each to its path with its body', async () => {
    const fake = await serve((request, response) => json(response, 202, { accepted: true, runId: request.url.split('/')[3] }));
    const client = createClient({ baseUrl: fake.baseUrl, token: 'steer' });
    const answers = [
      await client.decide('r1', { toolUseId: 'toolu_1', verdict: 'approve', input: { amount: 10 } }),
      await client.answer('r1', { toolUseId: 'toolu_2', answer: 'blue' }),
      await client.signal('r1', { name: 'payment-received', data: { id: 7 } }),
      await client.cancel('r1'),
      await client.pause('r1'),
      await client.unpause('r1'),
    ];
    expect(answers).toEqual(Array(6).fill({ accepted: true, runId: 'r1' }));
    expect(fake.requests.map((request) => `${request.method} ${request.url} ${request.body}`)).toEqual([
      'POST /v1/runs/r1/decisions {"toolUseId":"toolu_1","verdict":"approve","input":{"amount":10}}',
      'POST /v1/runs/r1/answers {"toolUseId":"toolu_2","answer":"blue"}',
      'POST /v1/runs/r1/signals {"name":"payment-received","data":{"id":7}}',
      'POST /v1/runs/r1/cancel {}',
      'POST /v1/runs/r1/pause {}',
      'POST /v1/runs/r1/unpause {}',
    ]);
    expect(fake.requests.every((request) => request.headers.authorization === 'Bearer steer')).toBe(true);
  });

  it('reads an error answer into ApiError: the server’s code and message, the status, never the token', async () => {
    const fake = await serve((request, response) => {
      if (request.url.endsWith('/decisions')) apiError(response, 409, 'conflict', 'toolu_1 was decided already.');
      else if (request.url.endsWith('/pause')) apiError(response, 403, 'forbidden', 'A read token cannot steer.');
      else {
        response.writeHead(502, { 'content-type': 'text/html' });
        response.end('<h1>Bad gateway</h1>');
      }
    });
    const client = createClient({ baseUrl: fake.baseUrl, token: 'secret-token', retry: { maxAttempts: 1 } });
    const conflict = await client.decide('r1', { toolUseId: 'toolu_1', verdict: 'deny', reason: 'no' }).catch((error: unknown) => error);
    expect(conflict).toBeInstanceOf(ApiError);
    expect(conflict).toMatchObject({ name: 'ApiError', status: 409, code: 'conflict', serverMessage: 'toolu_1 was decided already.', request: 'POST /v1/runs/r1/decisions', kind: 'refused', exitCode: 2 });
    expect((conflict as Error).message).toBe('POST /v1/runs/r1/decisions answered 409 conflict: toolu_1 was decided already.');
    const forbidden = await client.pause('r1').catch((error: unknown) => error);
    expect((forbidden as Error).message).toMatch(/403 forbidden: A read token cannot steer\. The token may not do this/);
    const proxy = await client.getRun('r1').catch((error: unknown) => error);
    expect(proxy).toMatchObject({ status: 502, code: 'internal', serverMessage: 'Bad Gateway: "<h1>Bad gateway</h1>"' });
    for (const error of [conflict, forbidden, proxy]) expect(JSON.stringify({ ...(error as object), message: (error as Error).message })).not.toContain('secret-token');
  });

  it('tries a read again when the API is out of reach, then gives up with ApiUnreachableError', async () => {
    let calls = 0;
    const refused: FetchLike = () => {
      calls += 1;
      return Promise.reject(new TypeError('fetch failed'));
    };
    const { waits, sleep } = recordingSleep();
    const client = createClient({ baseUrl: 'http://127.0.0.1:9', fetch: refused, retry: { sleep, random: () => 0, maxAttempts: 4 } });
    const error = await client.getRun('r1').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiUnreachableError);
    expect(error).toMatchObject({ request: 'GET /v1/runs/r1', attempts: 4, kind: 'store' });
    expect((error as Error).cause).toBeInstanceOf(TypeError);
    expect(calls).toBe(4);
    expect(waits).toEqual([250, 500, 1000]);
  });

  it('sends a steering request once: a second might be acted on twice', async () => {
    let calls = 0;
    const refused: FetchLike = () => {
      calls += 1;
      return Promise.reject(new TypeError('fetch failed'));
    };
    const client = createClient({ baseUrl: 'http://127.0.0.1:9', fetch: refused, retry: { sleep: recordingSleep().sleep } });
    await expect(client.signal('r1', { name: 'go' })).rejects.toMatchObject({ name: 'ApiUnreachableError', attempts: 1 });
    expect(calls).toBe(1);
  });

  it('an aborted call rejects with the abort, not as unreachable', async () => {
    const fake = await serve(() => undefined);
    const controller = new AbortController();
    const pending = createClient({ baseUrl: fake.baseUrl }).getRun('r1', { signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });
});
