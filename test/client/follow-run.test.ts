/**
 * followRun against a fake server: events in order, deltas passed through, a stream dropped
 * mid-record and resent with a duplicate (no event twice, none lost), the Last-Event-ID of each
 * reconnection, final answers (401, 403, 404), the waits between failed tries (recorded by an
 * injected sleep, never timed), giving up, and an abort that ends the loop.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/client/api-types.ts';
import { ApiError, ApiUnreachableError, createClient, type FetchLike } from '../../src/client/index.ts';
import { apiError, type FakeApi, frame, type Handler, openStream, startFakeApi, until, writeThenDrop } from './fake-api.ts';

const RUN = 'run-1';
const state = (seq: number, name: string): RunEvent => ({ type: 'state', seq, at: 1_700_000_000_000 + seq, state: name, turn: 1 });
const delta = (text: string): RunEvent => ({ type: 'text-delta', text });
const reply = (seq: number, text: string): RunEvent => ({ type: 'reply', seq, text, supersedesDeltas: true });
const call = (seq: number, id: string): RunEvent => ({ type: 'tool-call', seq, toolUseId: id, name: 'lookup', input: { q: id } });
const result = (seq: number, id: string): RunEvent => ({ type: 'tool-result', seq, toolUseId: id, isError: false, content: `found ${id}` });
const end = (seq: number): RunEvent => ({ type: 'end', seq, state: 'done', category: 'done', result: 'all done', problem: null });

/** A recorded run: record 2 holds two events (a call and its result), record 4 too. */
const RECORDED: RunEvent[] = [state(1, 'awaitingModel'), call(2, 'toolu_a'), result(2, 'toolu_a'), reply(3, 'thinking done'), call(4, 'toolu_b'), result(4, 'toolu_b'), end(5)];

/** The recorded events after record `after`, as a correct server sends them. */
const recordsAfter = (seq: number | undefined) => RECORDED.filter((event) => 'seq' in event && (seq === undefined || event.seq > seq));
const lastEventIdOf = (api: FakeApi, index: number) => api.requests[index]!.headers['last-event-id'];

let api: FakeApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** A fake server whose n-th event connection is answered by handlers[n]. */
async function streams(...handlers: Handler[]): Promise<FakeApi> {
  let connection = 0;
  api = await startFakeApi((request, response) => {
    expect(request.url).toBe(`/v1/runs/${RUN}/events`);
    const handler = handlers[connection++];
    if (!handler) throw new Error(`no handler for connection ${connection}`);
    handler(request, response);
  });
  return api;
}

/** A sleep that waits no time and writes down how long it was asked to wait. */
function recordingSleep(): { waits: number[]; sleep: (ms: number) => Promise<void> } {
  const waits: number[] = [];
  return { waits, sleep: async (ms) => void waits.push(ms) };
}

async function collect(iterator: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  for await (const event of iterator) events.push(event);
  return events;
}

describe('followRun', () => {
  it('yields the events in order, text deltas in their place, and ends after end', async () => {
    const withDeltas = [RECORDED[0]!, delta('thin'), delta('king'), ...RECORDED.slice(1)];
    const fake = await streams((_request, response) => {
      openStream(response);
      // A comment as a keep-alive, and the stream left open after end: the client closes it.
      response.write(`: keep-alive\n\n${withDeltas.map(frame).join('')}`);
    });
    const client = createClient({ baseUrl: fake.baseUrl, token: 'secret-token' });
    expect(await collect(client.followRun(RUN))).toEqual(withDeltas);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer secret-token');
    expect(fake.requests[0]!.headers.accept).toBe('text/event-stream');
    expect(lastEventIdOf(fake, 0)).toBeUndefined();
    await until(() => fake.closed.has(0));
  });

  it('hands text deltas to onDelta instead, and yields recorded events only', async () => {
    const fake = await streams((_request, response) => {
      openStream(response);
      response.end([RECORDED[0]!, delta('a'), delta('b'), ...RECORDED.slice(1)].map(frame).join(''));
    });
    const deltas: string[] = [];
    const events = await collect(createClient({ baseUrl: fake.baseUrl }).followRun(RUN, { onDelta: (event) => deltas.push(event.text) }));
    expect(events).toEqual(RECORDED);
    expect(deltas).toEqual(['a', 'b']);
  });

  it('starts after the record it is given, sent as Last-Event-ID', async () => {
    const fake = await streams((request, response) => {
      openStream(response);
      response.end(recordsAfter(Number(request.headers['last-event-id'])).map(frame).join(''));
    });
    expect(await collect(createClient({ baseUrl: fake.baseUrl }).followRun(RUN, { after: 3 }))).toEqual(recordsAfter(3));
    expect(lastEventIdOf(fake, 0)).toBe('3');
  });

  it('reconnects after a drop in the middle of a record with the last whole record, and yields every event once', async () => {
    const { waits, sleep } = recordingSleep();
    const fake = await streams(
      // Records 1 and 2, then the first of record 4's two events... after record 3: dropped.
      (_request, response) => {
        openStream(response);
        writeThenDrop(response, RECORDED.slice(0, 5).map(frame).join(''));
      },
      // Asked for the records after 3; resends record 2's result as well (a duplicate), then a delta.
      (request, response) => {
        openStream(response);
        writeThenDrop(response, [result(2, 'toolu_a'), ...recordsAfter(Number(request.headers['last-event-id'])).slice(0, 2), delta('x')].map(frame).join(''));
      },
      // A stream that ends cleanly before end is a drop too.
      (request, response) => {
        openStream(response);
        response.end([call(4, 'toolu_b'), ...recordsAfter(Number(request.headers['last-event-id']))].map(frame).join(''));
      },
    );
    const client = createClient({ baseUrl: fake.baseUrl, retry: { sleep, random: () => 0 } });
    expect(await collect(client.followRun(RUN))).toEqual([...RECORDED.slice(0, 6), delta('x'), RECORDED[6]]);
    // Record 4 was in progress at the first drop (its second event had not come): the resume point is 3.
    expect(fake.requests.map((request) => request.headers['last-event-id'])).toEqual([undefined, '3', '3']);
    // Each drop follows a connection that opened: the wait starts over from the first step each time.
    expect(waits).toEqual([250, 250]);
  });

  it('after a drop at a record boundary, asks for that record again and skips what it already yielded', async () => {
    const fake = await streams(
      (_request, response) => {
        openStream(response);
        writeThenDrop(response, RECORDED.slice(0, 3).map(frame).join(''));
      },
      (request, response) => {
        openStream(response);
        response.end(recordsAfter(Number(request.headers['last-event-id'])).map(frame).join(''));
      },
    );
    const client = createClient({ baseUrl: fake.baseUrl, retry: { sleep: recordingSleep().sleep } });
    expect(await collect(client.followRun(RUN))).toEqual(RECORDED);
    expect(lastEventIdOf(fake, 1)).toBe('1');
  });

  it.each([
    [401, 'unauthorized'],
    [403, 'forbidden'],
    [404, 'not-found'],
  ])('stops at once with an ApiError on %i, trying nothing again', async (status, code) => {
    const fake = await streams((_request, response) => apiError(response, status, code, `the server says ${code}`));
    const { waits, sleep } = recordingSleep();
    const error = await collect(createClient({ baseUrl: fake.baseUrl, token: 'secret-token', retry: { sleep } }).followRun(RUN)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ name: 'ApiError', status, code, serverMessage: `the server says ${code}`, kind: 'refused' });
    expect((error as Error).message).toContain(`GET /v1/runs/${RUN}/events answered ${status} ${code}: the server says ${code}`);
    expect((error as Error).message).not.toContain('secret-token');
    expect(fake.requests).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('waits longer after each failed try (doubling, capped), and starts over once a connection opens', async () => {
    const unavailable: Handler = (_request, response) => apiError(response, 503, 'internal', 'starting');
    const fake = await streams(
      unavailable,
      unavailable,
      unavailable,
      unavailable,
      (_request, response) => {
        openStream(response);
        writeThenDrop(response, frame(RECORDED[0]!));
      },
      unavailable,
      (request, response) => {
        openStream(response);
        response.end(recordsAfter(Number(request.headers['last-event-id'] ?? 0)).map(frame).join(''));
      },
    );
    // Two tries the network refuses before the server is even asked.
    let refusals = 2;
    const flaky: FetchLike = (input, init) => (refusals-- > 0 ? Promise.reject(new TypeError('fetch failed')) : fetch(input, init));
    const { waits, sleep } = recordingSleep();
    const client = createClient({ baseUrl: fake.baseUrl, fetch: flaky });
    const events = await collect(client.followRun(RUN, { reconnect: { sleep, random: () => 0.5, initialDelayMs: 100, maxDelayMs: 1000 } }));
    expect(events).toEqual(RECORDED);
    // Steps 100, 200, 400, 800, 1000 (capped), 1000, each three quarters of it with this random; then, after the connection that opened and dropped, 100 and 200 again.
    expect(waits).toEqual([75, 150, 300, 600, 750, 750, 75, 150]);
  });

  it('takes the server’s retry: as its first step', async () => {
    const fake = await streams(
      (_request, response) => {
        openStream(response);
        writeThenDrop(response, `retry: 2000\n\n${frame(RECORDED[0]!)}`);
      },
      (_request, response) => apiError(response, 502, 'internal', 'bad gateway'),
      (_request, response) => {
        openStream(response);
        response.end(recordsAfter(1).map(frame).join(''));
      },
    );
    const { waits, sleep } = recordingSleep();
    await collect(createClient({ baseUrl: fake.baseUrl }).followRun(RUN, { reconnect: { sleep, random: () => 0 } }));
    expect(waits).toEqual([1000, 2000]);
  });

  it('gives up with ApiUnreachableError after maxAttempts failed tries in a row', async () => {
    const refused: FetchLike = () => Promise.reject(new TypeError('fetch failed'));
    const { waits, sleep } = recordingSleep();
    const client = createClient({ baseUrl: 'http://127.0.0.1:9', fetch: refused, token: 'secret-token' });
    const error = await collect(client.followRun(RUN, { reconnect: { sleep, maxAttempts: 4, random: () => 0 } })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiUnreachableError);
    expect(error).toMatchObject({ name: 'ApiUnreachableError', attempts: 4, kind: 'store' });
    expect((error as Error).message).toMatch(/^GET \/v1\/runs\/run-1\/events: the API could not be reached after 4 tries \(fetch failed\)\. Check the base URL/);
    expect(waits).toEqual([250, 500, 1000]);
  });

  it('ends quietly when its signal aborts, and closes the connection', async () => {
    const fake = await streams((_request, response) => {
      openStream(response);
      response.write(RECORDED.slice(0, 2).map(frame).join(''));
    });
    const controller = new AbortController();
    const events: RunEvent[] = [];
    for await (const event of createClient({ baseUrl: fake.baseUrl }).followRun(RUN, { signal: controller.signal })) {
      events.push(event);
      if (events.length === 1) controller.abort();
    }
    expect(events).toEqual([RECORDED[0]]);
    await until(() => fake.closed.has(0));
  });

  it('ends quietly when its signal aborts while waiting to reconnect', async () => {
    const fake = await streams((_request, response) => {
      openStream(response);
      writeThenDrop(response, frame(RECORDED[0]!));
    });
    const controller = new AbortController();
    const events: RunEvent[] = [];
    // The real sleep, a minute long: only the abort can end it.
    const iterator = createClient({ baseUrl: fake.baseUrl }).followRun(RUN, { signal: controller.signal, reconnect: { initialDelayMs: 60_000, random: () => 0.99 } });
    const done = (async () => {
      for await (const event of iterator) events.push(event);
    })();
    await until(() => events.length === 1 && fake.closed.has(0));
    controller.abort();
    await done;
    expect(events).toEqual([RECORDED[0]]);
    expect(fake.requests).toHaveLength(1);
  });

  it('takes a connection silent past idleTimeoutMs for dropped, and makes it again', async () => {
    const fake = await streams(
      // One record, then silence with the connection open.
      (_request, response) => {
        openStream(response);
        response.write(frame(RECORDED[0]!));
      },
      // Every later connection answers at once (a very busy machine may still take one of them for silent: any number of them works).
      ...Array<Handler>(10).fill((request, response) => {
        openStream(response);
        response.end(recordsAfter(Number(request.headers['last-event-id'] ?? 0)).map(frame).join(''));
      }),
    );
    const { waits, sleep } = recordingSleep();
    const events = await collect(createClient({ baseUrl: fake.baseUrl }).followRun(RUN, { idleTimeoutMs: 50, reconnect: { sleep, random: () => 0 } }));
    expect(events).toEqual(RECORDED);
    expect(fake.requests.length).toBeGreaterThanOrEqual(2);
    expect(lastEventIdOf(fake, 1)).toBeUndefined();
    // Each silent connection had opened: every wait is the first step.
    expect(waits.length).toBe(fake.requests.length - 1);
    expect(new Set(waits)).toEqual(new Set([250]));
    await until(() => fake.closed.has(0));
  });

  it('closes the connection when the loop breaks early', async () => {
    const fake = await streams((_request, response) => {
      openStream(response);
      response.write(RECORDED.map(frame).join(''));
    });
    for await (const event of createClient({ baseUrl: fake.baseUrl }).followRun(RUN)) {
      expect(event).toEqual(RECORDED[0]);
      break;
    }
    await until(() => fake.closed.has(0));
  });

  it('refuses an answer that is not an event stream, and an event whose data is not JSON', async () => {
    const fake = await streams(
      (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html' });
        response.end('<html>a login page</html>');
      },
      (_request, response) => {
        openStream(response);
        response.end('id: 1\ndata: {not json\n\n');
      },
    );
    const client = createClient({ baseUrl: fake.baseUrl });
    await expect(collect(client.followRun(RUN))).rejects.toMatchObject({ name: 'ApiError', code: 'unreadable', message: expect.stringContaining('not an event stream') });
    await expect(collect(client.followRun(RUN))).rejects.toMatchObject({ name: 'ApiError', code: 'unreadable', message: expect.stringContaining("an event's data is not JSON") });
  });
});
