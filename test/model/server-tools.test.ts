/**
 * Claude's server tools (web search, web fetch, code execution) as a request option: what the
 * API would refuse of them is refused before anything is sent, what a request carries (through
 * the real SDK to the fake Messages API), how a run pins them and a resume is held to them, their
 * use counted in the usage and the cost, the code execution container kept with the run, and
 * what the fake refuses as the API does.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUsage, containerAfter } from '../../machines/agent-loop.logic.ts';
import type { AgentContext, ModelReply } from '../../machines/agent-loop.types.ts';
import { defineAgent } from '../../src/agent/agent-definition.ts';
import { parseArgs } from '../../src/cli/args.ts';
import { modelSetupOf } from '../../src/cli/model-setup.ts';
import { anthropicModel } from '../../src/model/anthropic-model.ts';
import type { ModelRequest } from '../../src/model/model.ts';
import { pinnedRequestOf, RequestOptionsChangedError, type requestDifferences } from '../../src/model/pinned-request.ts';
import { costAt } from '../../src/model/prices.ts';
import { receiveReply } from '../../src/model/reply-check.ts';
import { checkRequestAgainst, checkRequestOptions, RequestOptionError, type RequestRule } from '../../src/model/request-options.ts';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import type { ServerToolsOption } from '../../src/model/server-tools.ts';
import { liveContainer } from '../../src/runtime/model-call.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import { encodeRecord, encodeSnapshotRecord, applyRecord } from '../../src/store/journal/journal-codec.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { storedUsage } from '../../src/store/journal/record-shape.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { assistantTurns, FakeAnthropic, type ReceivedRequest, type Responder } from '../helpers/fake-anthropic.ts';
import { serverToolUse } from '../helpers/fake-server-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
const MODEL = 'claude-test-model';
const USAGE = { input: 1_000, output: 100, cacheRead: 0, cacheWrite: 0 };
const PRICE = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

async function withFake<T>(responder: Responder, body: (fake: FakeAnthropic, url: string) => Promise<T>): Promise<T> {
  const fake = new FakeAnthropic(responder);
  const url = await fake.start();
  try {
    return await body(fake, url);
  } finally {
    await fake.stop();
  }
}

function refusal(run: () => unknown): RequestOptionError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(RequestOptionError);
    return error as RequestOptionError;
  }
  throw new Error('not refused');
}

const ask = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({ system: null, messages: [{ role: 'user', content: 'hello' }], tools: [], maxTokens: 4_000, ...overrides });
const body = (request: ReceivedRequest) => request.body as ReceivedRequest['body'] & { tools?: Array<Record<string, unknown>>; container?: unknown };

describe('what the API refuses of the server tools is refused before anything is sent', () => {
  it.each<[string, ServerToolsOption, RequestRule, string]>([
    ['max_uses of 0', { webSearch: { maxUses: 0 } }, 'invalid', 'serverTools.webSearch.maxUses 0 is not a whole number of 1 or more'],
    ['a fractional max_uses', { webFetch: { maxUses: 2.5 } }, 'invalid', 'serverTools.webFetch.maxUses 2.5 is not a whole number'],
    ['allowed and blocked domains together', { webSearch: { allowedDomains: ['a.com'], blockedDomains: ['b.com'] } }, 'server-tool-domains-both', 'gives both allowedDomains and blockedDomains'],
    ['the same for web fetch', { webFetch: { allowedDomains: ['a.com'], blockedDomains: ['b.com'] } }, 'server-tool-domains-both', 'serverTools.webFetch gives both'],
    ['a domain with its scheme', { webSearch: { allowedDomains: ['https://a.com'] } }, 'invalid', 'holds "https://a.com", which is not a domain'],
    ['an empty list of domains', { webFetch: { blockedDomains: [] } }, 'invalid', 'is not a list of one or more domains'],
    ['a location that is not approximate', { webSearch: { userLocation: { type: 'exact' } as never } }, 'invalid', 'userLocation.type must be approximate'],
    ['a country that is not two letters', { webSearch: { userLocation: { type: 'approximate', country: 'Germany' } } }, 'invalid', 'userLocation.country "Germany" is not a two-letter country code'],
    ['a time zone that is none', { webSearch: { userLocation: { type: 'approximate', timezone: 'Mars/Olympus' } } }, 'invalid', '"Mars/Olympus" is not an IANA time zone'],
    ['a version the SDK does not know', { codeExecution: { type: 'code_execution_20991231' as never } }, 'server-tool-unknown-type', 'is not a version of the code_execution tool this SDK knows'],
    ['a setting the tool has not', { codeExecution: { maxUses: 3 } as never }, 'invalid', 'serverTools.codeExecution has no setting maxUses'],
    ['a tool there is not', { imageSearch: true } as never, 'invalid', 'serverTools has no tool imageSearch'],
    ['citations that are not true or false', { webFetch: { citations: 'yes' as never } }, 'invalid', 'citations is not true or false'],
  ])('%s', (_, serverTools, rule, says) => {
    const error = refusal(() => anthropicModel({ model: MODEL, apiKey: KEY, serverTools }));
    expect(error.rule).toBe(rule);
    expect(error.message).toContain(says);
    expect(error.message).toContain('Nothing was sent.');
    expect(error.message).not.toContain(KEY);
  });

  it('takes every setting the API takes', () => {
    const serverTools: ServerToolsOption = {
      webSearch: { type: 'web_search_20260209', maxUses: 5, allowedDomains: ['example.com', 'docs.example.org/api'], userLocation: { type: 'approximate', city: 'Berlin', country: 'DE', timezone: 'Europe/Berlin' } },
      webFetch: { maxUses: 3, blockedDomains: ['ads.example.com'], maxContentTokens: 50_000, citations: true },
      codeExecution: true,
    };
    expect(() => checkRequestOptions(MODEL, { serverTools })).not.toThrow();
  });

  it('refuses a tool of the run named like a server tool it offers, and takes a forced server tool', () => {
    const error = refusal(() => checkRequestAgainst(MODEL, { serverTools: { webSearch: true } }, 4_000, ['web_search', 'read_file']));
    expect(error.rule).toBe('server-tool-name-taken');
    expect(error.message).toContain('the run has a tool of its own named web_search');
    expect(() => checkRequestAgainst(MODEL, { serverTools: { webSearch: true }, toolChoice: { type: 'tool', name: 'web_search' } }, 4_000, [])).not.toThrow();
    expect(() => checkRequestAgainst(MODEL, { serverTools: { codeExecution: true }, toolChoice: { type: 'any' } }, 4_000, [])).not.toThrow();
  });
});

describe('what a request carries', () => {
  it('lists the server tools after the run’s own, in the API’s words, with no beta for the current versions', async () => {
    await withFake(
      () => ({ reply: { ...endTurnReply('done'), usage: USAGE } }),
      async (fake, url) => {
        const model = anthropicModel({
          model: MODEL,
          apiKey: KEY,
          baseURL: url,
          serverTools: { webSearch: { maxUses: 4, blockedDomains: ['spam.example'], userLocation: { type: 'approximate', country: 'FR' } }, webFetch: { maxContentTokens: 9_000, citations: false }, codeExecution: true },
        });
        await model.createMessage(ask({ tools: [{ name: 'lookup', description: 'look up', input_schema: { type: 'object' } }] }));
        const [request] = fake.requests;
        expect(body(request!).tools).toEqual([
          { name: 'lookup', description: 'look up', input_schema: { type: 'object' } },
          { type: 'web_search_20260318', name: 'web_search', max_uses: 4, blocked_domains: ['spam.example'], user_location: { type: 'approximate', country: 'FR' } },
          { type: 'web_fetch_20260318', name: 'web_fetch', max_content_tokens: 9_000, citations: { enabled: false } },
          { type: 'code_execution_20260521', name: 'code_execution' },
        ]);
        expect(request!.headers['anthropic-beta']).toBeUndefined();
        expect(request!.path).toBe('/v1/messages');
        expect(body(request!).container).toBeUndefined();
      },
    );
  });

  it('asks for the beta the first code execution version needs, and sends the container it is given', async () => {
    await withFake(
      () => ({ reply: { ...endTurnReply('done'), usage: USAGE } }),
      async (fake, url) => {
        const model = anthropicModel({ model: MODEL, apiKey: KEY, baseURL: url, serverTools: { codeExecution: { type: 'code_execution_20250522' } }, stream: false });
        // A container the fake made: a first request runs code in it.
        const first = await withServerReply(model, fake);
        expect(first.container).toMatchObject({ id: 'container_fake_001' });
        await model.createMessage(ask({ container: 'container_fake_001' }));
        const request = fake.requests.at(-1)!;
        expect(request.headers['anthropic-beta']).toBe('code-execution-2025-05-22');
        expect(request.path).toMatch(/^\/v1\/messages\?beta=true|^\/v1\/messages/);
        expect(body(request).container).toBe('container_fake_001');
      },
    );
  });

  it('gives back the server tool blocks whole, the searches and fetches among the usage, and the container', async () => {
    const reply: ModelReply = {
      content: [{ type: 'text', text: 'Looking.' }, serverToolUse('web_search', { query: 'durable agents' }), serverToolUse('web_fetch', { url: 'https://example.com/a' }), serverToolUse('bash_code_execution', { command: 'ls' }), { type: 'text', text: 'Done.' }],
      stop_reason: 'end_turn',
      usage: USAGE,
    };
    for (const stream of [true, false]) {
      await withFake(
        () => ({ reply }),
        async (fake, url) => {
          const model = anthropicModel({ model: MODEL, apiKey: KEY, baseURL: url, serverTools: { webSearch: true, webFetch: true, codeExecution: true }, stream });
          const answer = await model.createMessage(ask());
          expect(answer.content.map((block) => block.type)).toEqual([
            'text',
            'server_tool_use',
            'web_search_tool_result',
            'server_tool_use',
            'web_fetch_tool_result',
            'server_tool_use',
            'bash_code_execution_tool_result',
            'text',
          ]);
          expect(answer.usage).toEqual({ ...USAGE, webSearchRequests: 1, webFetchRequests: 1 });
          expect(answer.container).toEqual({ id: 'container_fake_001', expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
          // Sent back as they came: the fake checks each block against what it issued, byte for byte.
          await model.createMessage(ask({ messages: [{ role: 'user', content: 'hello' }, { role: 'assistant', content: answer.content }, { role: 'user', content: 'go on' }], container: answer.container!.id }));
          expect(fake.serverTools.blocksVerified, `stream: ${stream}`).toBe(6);
        },
      );
    }
  });
});

async function withServerReply(model: ReturnType<typeof anthropicModel>, fake: FakeAnthropic): Promise<ModelReply> {
  fake.respondWith(() => ({ reply: { content: [serverToolUse('code_execution', { code: 'print(1)' }), { type: 'text', text: '1' }], stop_reason: 'end_turn', usage: USAGE } }));
  const reply = await model.createMessage(ask());
  fake.respondWith(() => ({ reply: { ...endTurnReply('done'), usage: USAGE } }));
  return reply;
}

describe('pinned with the run', () => {
  const stored = (request: Parameters<typeof requestDifferences>[0]) => ({ header: { request } as never, location: '/runs/r1' });

  it('pins each offered tool as its settings, true as {}, false not at all', () => {
    expect(pinnedRequestOf({ serverTools: { webSearch: true, webFetch: false, codeExecution: { type: 'code_execution_20260120' } } })).toEqual({
      serverTools: { webSearch: {}, codeExecution: { type: 'code_execution_20260120' } },
    });
    expect(pinnedRequestOf({ serverTools: { webSearch: false } })).toBeUndefined();
    expect(anthropicModel({ model: MODEL, apiKey: KEY, serverTools: { webFetch: { maxUses: 2 } } }).request).toEqual({ serverTools: { webFetch: { maxUses: 2 } } });
  });

  it('reads the flags into the request a run pins; a setting turns its tool on', () => {
    const args = parseArgs(['run', '--model', MODEL, '--task', 't', '--web-search', '--web-search-max-uses', '3', '--web-fetch-allowed-domains', 'example.com, docs.example.org/api', '--code-execution'], '/work');
    expect(args).toMatchObject({ claude: { request: { serverTools: { webSearch: { maxUses: 3 }, webFetch: { allowedDomains: ['example.com', 'docs.example.org/api'] }, codeExecution: {} } } } });
    expect(() => parseArgs(['run', '--model', MODEL, '--task', 't', '--web-search-allowed-domains', 'a.com', '--web-search-blocked-domains', 'b.com'], '/work')).toThrow(
      '--web-search-allowed-domains and --web-search-blocked-domains do not go together',
    );
    expect(() => parseArgs(['run', '--model', MODEL, '--task', 't', '--web-fetch-blocked-domains', 'https://x.com'], '/work')).toThrow('without a scheme');
    expect(() => parseArgs(['demo', '--web-search'], '/work')).toThrow('the server tools (--web-search, --web-fetch, --code-execution)');
  });

  it('refuses a resume that gives another set, unless --allow-request-change, and takes the pinned set on a plain resume', () => {
    const pinned = { serverTools: { webSearch: { maxUses: 3 }, codeExecution: {} } };
    const plain = modelSetupOf(MODEL, undefined, stored(pinned), 4_000, []);
    expect(plain.options.serverTools).toEqual(pinned.serverTools);
    const same = modelSetupOf(MODEL, { request: { serverTools: { codeExecution: {}, webSearch: { maxUses: 3 } } }, price: undefined, allowRequestChange: false }, stored(pinned), 4_000, []);
    expect(same.notes).toEqual([]);
    const other = { request: { serverTools: { webSearch: {} } }, price: undefined, allowRequestChange: false };
    let error: unknown;
    try {
      modelSetupOf(MODEL, other, stored(pinned), 4_000, []);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RequestOptionsChangedError);
    expect((error as Error).message).toContain('started with the request options --web-search --web-search-max-uses 3 --code-execution');
    expect((error as Error).message).toContain('this resume changes server tools: --web-search --web-search-max-uses 3 --code-execution → --web-search');
    const forced = modelSetupOf(MODEL, { ...other, allowRequestChange: true }, stored(pinned), 4_000, []);
    expect(forced.options.serverTools).toEqual({ webSearch: {} });
    expect(forced.resumeWords).toEqual(expect.arrayContaining(['--web-search', '--allow-request-change']));
    expect(forced.resumeWords).not.toContain('--code-execution');
  });

  it('is part of an agent’s version where the agent offers them, and leaves every other version as it was', () => {
    const spec = { name: 'researcher', model: 'claude-sonnet-5-5', tools: [] };
    const plain = defineAgent(spec).version;
    const searching = defineAgent({ ...spec, serverTools: { webSearch: true } }).version;
    expect(searching).not.toBe(plain);
    expect(defineAgent({ ...spec, serverTools: { webSearch: { maxUses: 2 } } }).version).not.toBe(searching);
    expect(defineAgent({ ...spec, serverTools: { webSearch: false } }).version).toBe(plain);
    const model = anthropicModel({ model: 'claude-sonnet-5-5', apiKey: KEY, serverTools: { webSearch: true } });
    expect(defineAgent({ ...spec, model }).version).toBe(searching);
    expect(() => defineAgent({ ...spec, model, serverTools: { webSearch: true } })).toThrow('serverTools go with a model given by name');
    expect(() => defineAgent({ ...spec, serverTools: { webSearch: { maxUses: -1 } } })).toThrow('serverTools.webSearch.maxUses -1 is not a whole number of 1 or more');
  });
});

describe('their use counted, their container kept', () => {
  it('counts searches and fetches beside the tokens, and prices a search at $10 per 1,000', () => {
    const received = receiveReply({ content: [], stop_reason: 'end_turn', usage: { ...USAGE, webSearchRequests: 3, webFetchRequests: 2 } });
    expect(received.usage).toEqual({ ...USAGE, webSearchRequests: 3, webFetchRequests: 2 });
    expect(received.usageNote).toBeNull();
    expect(receiveReply({ content: [], stop_reason: 'end_turn', usage: { ...USAGE, webSearchRequests: 1.5 } }).usageProblem).toContain('webSearchRequests = 1.5');
    // A run that never searched keeps the usage it always had.
    expect(addUsage(USAGE, USAGE)).toEqual({ input: 2_000, output: 200, cacheRead: 0, cacheWrite: 0 });
    expect(addUsage({ ...USAGE, webSearchRequests: 2 }, { ...USAGE, webSearchRequests: 1, webFetchRequests: 4 })).toMatchObject({ webSearchRequests: 3, webFetchRequests: 4 });
    const tokens = costAt(PRICE, USAGE);
    expect(costAt(PRICE, { ...USAGE, webSearchRequests: 7, webFetchRequests: 9 })).toBeCloseTo(tokens + 0.07, 10);
    expect(storedUsage({ ...USAGE, webSearchRequests: 7 })).toEqual({ ...USAGE, webSearchRequests: 7 });
    expect(storedUsage(USAGE)).toEqual(USAGE);
  });

  it('keeps the container a reply names until it expires, in the journal and its snapshots', () => {
    const reply = (container?: ModelReply['container']): ModelReply => ({ content: [], stop_reason: 'end_turn', usage: USAGE, ...(container !== undefined ? { container } : {}) });
    const mark = containerAfter(null, reply({ id: 'container_1', expires_at: '2027-01-01T00:00:00Z' }));
    expect(mark).toEqual({ id: 'container_1', expiresAt: '2027-01-01T00:00:00Z' });
    expect(containerAfter(mark, reply())).toBe(mark);
    expect(containerAfter(mark, reply(null))).toBe(mark);
    expect(containerAfter(mark, reply({ id: 'container_1', expires_at: '2027-01-01T00:00:00Z' }))).toBe(mark);
    expect(liveContainer(mark, Date.parse('2026-12-31T23:59:59Z'))).toBe('container_1');
    expect(liveContainer(mark, Date.parse('2027-01-01T00:00:00Z'))).toBeNull();
    expect(liveContainer(undefined, 0)).toBeNull();

    const context = { task: 't', system: null, maxTurns: 5, turn: 0, usage: USAGE, messages: [], pending: [], results: [], decisions: [], awaiting: null, pausesInARow: 0, maxPausesInARow: 8, heldReply: null, finalText: null, failure: null } as AgentContext;
    const first = encodeRecord(null, { seq: 0, at: 1, state: 'awaitingModel', event: 'START', context });
    expect(first).not.toHaveProperty('container');
    const view = applyRecord(null, first);
    const withMark = { ...context, container: mark };
    const second = encodeRecord(view, { seq: 1, at: 2, state: 'done', event: 'MODEL_REPLY', context: withMark });
    expect(second.container).toEqual(mark);
    expect(applyRecord(view, second).context.container).toEqual(mark);
    const snapshot = encodeSnapshotRecord(applyRecord(null, first), { seq: 1, at: 2, state: 'done', event: 'MODEL_REPLY', context: withMark }, { seq: 0, crc: '00000000' });
    expect(applyRecord(null, snapshot).context.container).toEqual(mark);
    expect(() => applyRecord(applyRecord(null, first), { ...second, container: { id: 7 } as never })).toThrow('the code execution container is not an id and an expiry');
  });
});

describe('the fake refuses what the API refuses', () => {
  const reply = (): ModelReply => ({ content: [serverToolUse('web_search', { query: 'q' }), serverToolUse('code_execution', { code: 'x = 1' }), { type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: USAGE });
  const errorOf = async (run: () => Promise<unknown>) => run().then(() => null, (error: Error) => error.message);

  it('an altered or dropped result block, an unknown tool type, a container that does not exist or has expired', async () => {
    await withFake(
      () => ({ reply: reply() }),
      async (fake, url) => {
        const model = anthropicModel({ model: MODEL, apiKey: KEY, baseURL: url, serverTools: { webSearch: true, codeExecution: true }, maxRetries: 0, stream: false });
        const answer = await model.createMessage(ask());
        const history = (content: ModelReply['content']) => ask({ messages: [{ role: 'user', content: 'hello' }, { role: 'assistant', content }, { role: 'user', content: 'again' }] });
        const altered = structuredClone(answer.content);
        (altered[1]!.content as Array<Record<string, unknown>>)[0]!.encrypted_content = 'tampered';
        expect(await errorOf(() => model.createMessage(history(altered)))).toContain('the web_search_tool_result block was not sent back as it was returned');
        const dropped = answer.content.filter((block) => block.type !== 'code_execution_tool_result');
        expect(await errorOf(() => model.createMessage(history(dropped)))).toContain('is not followed by its result (a result block was dropped)');
        expect(await errorOf(() => model.createMessage(ask({ container: 'container_nobody_made' })))).toContain('container: container_nobody_made not found');
        fake.serverTools.expireContainers();
        expect(await errorOf(() => model.createMessage(ask({ container: answer.container!.id })))).toContain('has expired');
        const unknown = anthropicModel({ model: MODEL, apiKey: KEY, baseURL: url, maxRetries: 0, stream: false });
        const raw = await errorOf(() => unknown.createMessage(ask({ tools: [{ type: 'web_search_20991231', name: 'web_search' } as never] })));
        expect(raw).toContain("Input tag 'web_search_20991231' found using 'type' does not match any of the expected tags");
      },
    );
  });

  it('thinking with the older API version’s sampling: a temperature other than 1, top_k, a top_p under 0.95', async () => {
    await withFake(
      () => ({ reply: { ...endTurnReply('done'), usage: USAGE } }),
      async (fake, url) => {
        const send = (extra: Record<string, unknown>) =>
          fetch(`${url}/v1/messages`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
            body: JSON.stringify({ model: MODEL, max_tokens: 4_000, messages: [{ role: 'user', content: 'hi' }], thinking: { type: 'enabled', budget_tokens: 2_000 }, ...extra }),
          }).then(async (response) => ({ status: response.status, text: await response.text() }));
        expect(await send({ temperature: 0.5 })).toMatchObject({ status: 400, text: expect.stringContaining('`temperature` may only be set to 1 when thinking is enabled') });
        expect(await send({ top_k: 5 })).toMatchObject({ status: 400, text: expect.stringContaining('`top_k` is not supported when thinking is enabled') });
        expect(await send({ top_p: 0.9 })).toMatchObject({ status: 400, text: expect.stringContaining('`top_p` must be greater than or equal to 0.95') });
        expect(await send({ temperature: 1, top_p: 0.95 })).toMatchObject({ status: 200 });
        expect(fake.requests).toHaveLength(4);
      },
    );
  });
});

describe('a run with server tools, through the real SDK', () => {
  it('sends every server tool block back as it came, reuses its container, continues a paused turn, and counts searches in the cost', async () => {
    const lookup = defineTool({ name: 'lookup', description: 'look up', readOnly: true, inputSchema: { type: 'object' }, run: async () => 'found' });
    const script: Array<() => ModelReply> = [
      // A search and code, then the code runs long: the turn pauses with the call open.
      () => ({ content: [{ type: 'text', text: 'Searching.' }, serverToolUse('web_search', { query: 'q' }), serverToolUse('code_execution', { code: 'long()' }, { paused: true })], stop_reason: 'pause_turn', usage: USAGE }),
      // The continuation: the fake puts the paused call's result first; then a fetch and a tool of the run.
      () => ({ ...toolUseReply([{ id: 'toolu_1', name: 'lookup', input: {} }]), content: [serverToolUse('web_fetch', { url: 'https://example.com' }), { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} }], usage: USAGE }),
      () => ({ content: [serverToolUse('web_search', { query: 'again' }), serverToolUse('text_editor_code_execution', { command: 'create', path: 'a.txt', file_text: 'x' }), { type: 'text', text: 'All done.' }], stop_reason: 'end_turn', usage: USAGE }),
    ];
    await withFake(
      (request) => ({ reply: script[assistantTurns(request)]!() }),
      async (fake, url) => {
        const store = new FileStore(path.join(tempDir(), '.durable-agent'));
        const model = anthropicModel({ model: MODEL, apiKey: KEY, baseURL: url, price: PRICE, serverTools: { webSearch: true, webFetch: true, codeExecution: true } });
        const result = await startRun({ store, model, tools: [lookup], task: 't', budget: { maxCostUsd: 5 } });
        expect(result).toMatchObject({ status: 'done', text: 'All done.' });
        expect(fake.requests).toHaveLength(3);
        expect(fake.serverTools.containersAsked).toEqual([null, 'container_fake_001', 'container_fake_001']);
        // Request 2: the first reply's 3 blocks; request 3: those, the paused call's result, the fetch's two.
        expect(fake.serverTools.blocksVerified).toBe(3 + 6);
        expect(result.usage).toEqual({ input: 3_000, output: 300, cacheRead: 0, cacheWrite: 0, webSearchRequests: 2, webFetchRequests: 1 });
        expect(result.costUsd).toBeCloseTo(costAt(PRICE, { ...USAGE, input: 3_000, output: 300 }) + 0.02, 10);
        const { header } = await store.load();
        expect(header.request).toEqual({ serverTools: { webSearch: {}, webFetch: {}, codeExecution: {} } });
        store.close();
      },
    );
  });

  it('with thinking: thinking and server tool blocks both go back as they came, across a paused turn', async () => {
    const lookup = defineTool({ name: 'lookup', description: 'look up', readOnly: true, inputSchema: { type: 'object' }, run: async () => 'found' });
    const script: Array<() => ModelReply> = [
      () => ({ content: [serverToolUse('bash_code_execution', { command: 'sleep 600' }, { paused: true })], stop_reason: 'pause_turn', usage: USAGE }),
      () => ({ content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} }], stop_reason: 'tool_use', usage: USAGE }),
      () => ({ ...endTurnReply('Done.'), usage: USAGE }),
    ];
    await withFake(
      (request) => ({ reply: script[assistantTurns(request)]!() }),
      async (fake, url) => {
        const store = new FileStore(path.join(tempDir(), '.durable-agent'));
        const model = anthropicModel({ model: MODEL, apiKey: KEY, baseURL: url, thinking: { type: 'enabled', budget_tokens: 2_000 }, serverTools: { codeExecution: true } });
        const result = await startRun({ store, model, tools: [lookup], task: 't', maxTokens: 8_000 });
        expect(result).toMatchObject({ status: 'done', text: 'Done.' });
        expect(fake.answered).toHaveLength(3);
        expect(fake.thinkingBlocksVerified).toBe(1 + 2);
        expect(fake.serverTools.blocksVerified).toBe(1 + 2);
        expect(fake.serverTools.containersAsked).toEqual([null, 'container_fake_001', 'container_fake_001']);
        store.close();
      },
    );
  });
});
