/**
 * Claude's request options through the real SDK against the fake Messages API: what each one
 * sends, what is refused before anything is sent (the API's own rules), the summary request of
 * client compaction, betas and extra headers, a caller's own client, and the price a model is
 * given. Secrets (the key, a header's value) never reach an error message.
 */
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { forkRun } from '../../src/fork/fork-run.ts';
import { anthropicModel } from '../../src/model/anthropic-model.ts';
import { ModelCallError, type ModelRequest } from '../../src/model/model.ts';
import { ModelPriceError } from '../../src/model/prices.ts';
import { checkRequestOptions, RequestOptionError, type RequestRule } from '../../src/model/request-options.ts';
import { endTurnReply } from '../../src/model/scripted-model.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { FakeAnthropic, type ReceivedRequest } from '../helpers/fake-anthropic.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
const MODEL = 'claude-test-model';
const USAGE = { input: 1_000_000, output: 1_000_000, cacheRead: 0, cacheWrite: 0 };
const TOOLS = [{ name: 'lookup', description: 'look up', input_schema: { type: 'object' } }];

async function withFake<T>(body: (fake: FakeAnthropic, url: string) => Promise<T>): Promise<T> {
  const fake = new FakeAnthropic(() => ({ reply: { ...endTurnReply('done'), usage: USAGE } }));
  const url = await fake.start();
  try {
    return await body(fake, url);
  } finally {
    await fake.stop();
  }
}

function ask(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { system: null, messages: [{ role: 'user', content: 'hello' }], tools: TOOLS, maxTokens: 8_000, ...overrides };
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

type Body = ReceivedRequest['body'] & Record<string, unknown>;

describe('what the API refuses is refused before anything is sent', () => {
  const OLD = { apiVersion: '2023-06-01' } as const;
  it.each<[string, Parameters<typeof checkRequestOptions>[1], RequestRule, string]>([
    ['a temperature under the SDK’s API version', { temperature: 0.5 }, 'sampling-not-in-api-version', 'temperature is not a field of the Messages API version 2026-10-21'],
    ['topP and topK under it', { topP: 0.9, topK: 5 }, 'sampling-not-in-api-version', 'topP, topK are not fields'],
    ['thinking with a temperature other than 1', { ...OLD, thinking: { type: 'enabled', budget_tokens: 2_000 }, temperature: 0.7 }, 'thinking-temperature', 'temperature 0.7 does not go with thinking'],
    ['thinking with top_k', { ...OLD, thinking: { type: 'adaptive' }, topK: 10 }, 'thinking-top-k', 'topK does not go with thinking'],
    ['thinking with a top_p below 0.95', { ...OLD, thinking: { type: 'adaptive' }, topP: 0.9 }, 'thinking-top-p', 'topP 0.9 does not go with thinking'],
    ['thinking with tool_choice any', { thinking: { type: 'adaptive' }, toolChoice: { type: 'any' } }, 'thinking-tool-choice', 'toolChoice any (a forced tool call) does not go with thinking'],
    ['thinking with tool_choice tool', { thinking: { type: 'enabled', budget_tokens: 2_000 }, toolChoice: { type: 'tool', name: 'lookup' } }, 'thinking-tool-choice', 'does not go with thinking'],
    ['a thinking budget below 1024', { thinking: { type: 'enabled', budget_tokens: 1_023 } }, 'thinking-budget-too-small', 'the thinking budget 1023 is not a whole number of 1024 tokens or more'],
    ['a thinking type that is none', { thinking: { type: 'sometimes' } as never }, 'invalid', 'is not a thinking setting'],
    ['an empty stop sequence', { stopSequences: ['END', ' '] }, 'invalid', 'stopSequences must be texts'],
    ['a service tier that is none', { serviceTier: 'fastest' as never }, 'invalid', 'serviceTier "fastest" is not a service tier'],
    ['a tool choice naming no tool', { toolChoice: { type: 'tool', name: '' } }, 'invalid', 'which is not a tool name'],
  ])('%s', (_label, options, rule, says) => {
    const error = refusal(() => checkRequestOptions(MODEL, options));
    expect(error).toMatchObject({ name: 'RequestOptionError', kind: 'refused', exitCode: 2, model: MODEL, rule });
    expect(error.message).toContain(says);
    expect(error.message).toContain('Nothing was sent.');
    // The same refusal when the model is made: before any request.
    expect(() => anthropicModel({ model: MODEL, apiKey: KEY, ...options })).toThrow(RequestOptionError);
  });

  it('takes what the API takes: temperature 1 with thinking on the older version, top_p 0.95, tool_choice auto or none', () => {
    expect(() => checkRequestOptions(MODEL, { apiVersion: '2023-06-01', thinking: { type: 'enabled', budget_tokens: 1_024 }, temperature: 1, topP: 0.95 })).not.toThrow();
    expect(() => checkRequestOptions(MODEL, { thinking: { type: 'adaptive' }, toolChoice: { type: 'none' } })).not.toThrow();
    expect(() => checkRequestOptions(MODEL, { headers: { 'Anthropic-Version': '2023-06-01' }, temperature: 0.2 })).not.toThrow();
    expect(refusal(() => checkRequestOptions(MODEL, { apiVersion: '2023-06-01', headers: { 'anthropic-version': '2026-10-21' } })).message).toContain('disagree');
  });

  it('a budget not below the request’s max_tokens, a forced tool the run does not offer: refused at the request, nothing sent', async () => {
    await withFake(async (fake, url) => {
      const model = anthropicModel({ model: MODEL, apiKey: KEY, baseURL: url, maxRetries: 0, thinking: { type: 'enabled', budget_tokens: 4_000 } });
      const budget = await model.createMessage(ask({ maxTokens: 4_000 })).catch((error: unknown) => error);
      expect(budget).toMatchObject({ name: 'RequestOptionError', rule: 'thinking-budget-not-below-max-tokens' });
      expect((budget as Error).message).toContain('--max-tokens 8096');
      const forced = anthropicModel({ model: MODEL, apiKey: KEY, baseURL: url, maxRetries: 0, toolChoice: { type: 'tool', name: 'search' } });
      await expect(forced.createMessage(ask())).rejects.toMatchObject({ rule: 'tool-choice-unknown-tool', message: expect.stringContaining('it offers lookup') });
      await expect(forced.createMessage(ask({ tools: [] }))).rejects.toMatchObject({ rule: 'tool-choice-without-tools' });
      expect(fake.requests).toHaveLength(0);
      // A summary asks without thinking: the budget does not matter to it.
      await model.createMessage(ask({ maxTokens: 4_000, purpose: 'summary' }));
      expect(fake.requests).toHaveLength(1);
    });
  });
});

describe('what each option sends', () => {
  it('thinking, tool choice, stop sequences, metadata, service tier and effort, streamed and whole', async () => {
    await withFake(async (fake, url) => {
      for (const stream of [true, false]) {
        const model = anthropicModel({
          model: MODEL,
          apiKey: KEY,
          baseURL: url,
          maxRetries: 0,
          stream,
          thinking: { type: 'enabled', budget_tokens: 2_048 },
          toolChoice: { type: 'auto', disable_parallel_tool_use: true },
          stopSequences: ['END', '###'],
          metadata: { userId: 'user-4f2a' },
          serviceTier: 'standard_only',
          effort: 'high',
        });
        await model.createMessage(ask());
      }
      for (const request of fake.requests) {
        const body = request.body as Body;
        expect(body).toMatchObject({
          thinking: { type: 'enabled', budget_tokens: 2_048 },
          tool_choice: { type: 'auto', disable_parallel_tool_use: true },
          stop_sequences: ['END', '###'],
          metadata: { user_id: 'user-4f2a' },
          service_tier: 'standard_only',
          output_config: { effort: 'high' },
        });
        expect(body).not.toHaveProperty('temperature');
        expect(request.headers['anthropic-version']).toBe('2026-10-21');
      }
      expect(fake.requests.map((r) => r.body.stream ?? false)).toEqual([true, false]);
    });
  });

  it('temperature, top_p and top_k go with the older API version, which the request then asks for', async () => {
    await withFake(async (fake, url) => {
      const model = anthropicModel({ model: MODEL, apiKey: KEY, baseURL: url, maxRetries: 0, apiVersion: '2023-06-01', temperature: 0.3, topP: 0.8, topK: 20 });
      await model.createMessage(ask());
      const [request] = fake.requests;
      expect(request!.headers['anthropic-version']).toBe('2023-06-01');
      expect(request!.body).toMatchObject({ temperature: 0.3, top_p: 0.8, top_k: 20 });
      expect(model.request).toEqual({ apiVersion: '2023-06-01', temperature: 0.3, topP: 0.8, topK: 20 });
    });
  });

  it('the summary request of client compaction keeps tool_choice none and sends no thinking, forced tool or stop sequence', async () => {
    await withFake(async (fake, url) => {
      const model = anthropicModel({ model: MODEL, apiKey: KEY, baseURL: url, maxRetries: 0, thinking: { type: 'adaptive' }, toolChoice: { type: 'auto' }, stopSequences: ['END'], serviceTier: 'auto' });
      await model.createMessage(ask({ purpose: 'summary' }));
      const body = fake.requests[0]!.body as Body;
      expect(body.tool_choice).toEqual({ type: 'none' });
      expect(body).not.toHaveProperty('thinking');
      expect(body).not.toHaveProperty('stop_sequences');
      expect(body.service_tier).toBe('auto');
    });
  });

  it('betas go as the anthropic-beta header (the SDK’s beta messages), with the run’s own; extra headers go on every request', async () => {
    await withFake(async (fake, url) => {
      const headers = { 'x-gateway-team': 'research-7f3a9c21', 'x-trace-tag': 'nightly' };
      for (const stream of [true, false]) {
        const model = anthropicModel({ model: MODEL, apiKey: KEY, baseURL: url, maxRetries: 0, stream, betas: ['fast-mode-2026-02-01', 'fast-mode-2026-02-01'], headers });
        await model.createMessage(ask());
        await model.createMessage(ask({ serverCompaction: { triggerTokens: 100_000 } }));
      }
      for (const request of fake.requests) {
        expect(request.path).toBe('/v1/messages');
        expect(request.headers['x-gateway-team']).toBe('research-7f3a9c21');
        expect(request.headers['x-trace-tag']).toBe('nightly');
      }
      expect(fake.requests.map((r) => r.headers['anthropic-beta'])).toEqual([
        'fast-mode-2026-02-01',
        'compact-2026-01-12,fast-mode-2026-02-01',
        'fast-mode-2026-02-01',
        'compact-2026-01-12,fast-mode-2026-02-01',
      ]);
      // Neither betas nor headers are pinned with a run.
      expect(anthropicModel({ model: MODEL, apiKey: KEY, betas: ['x'], headers, metadata: { userId: 'u' } }).request).toBeUndefined();
    });
  });

  it('a header’s value and the key are taken out of an error that echoes them', async () => {
    const secret = 'gw-secret-9f8e7d6c5b4a';
    const fake = new FakeAnthropic(() => ({ status: 403, errorType: 'permission_error', message: `gateway refused x-gateway-token ${secret} with key ${KEY}` }));
    const url = await fake.start();
    try {
      const model = anthropicModel({ model: MODEL, apiKey: KEY, baseURL: url, maxRetries: 0, headers: { 'x-gateway-token': secret } });
      const error = await model.createMessage(ask()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ModelCallError);
      expect((error as Error).message).toContain('gateway refused x-gateway-token [redacted]');
      expect((error as Error).message).not.toContain(secret);
      expect((error as Error).message).not.toContain(KEY);
    } finally {
      await fake.stop();
    }
  });

  it('a caller’s own client is used as it is (no apiKey needed), with the options given here on top; apiKey beside it is refused', async () => {
    await withFake(async (fake, url) => {
      const client = new Anthropic({ apiKey: KEY, baseURL: url, maxRetries: 0, defaultHeaders: { 'x-from-client': 'yes' } });
      const saved = process.env['ANTHROPIC_API_KEY'];
      delete process.env['ANTHROPIC_API_KEY'];
      try {
        const model = anthropicModel({ model: MODEL, client, headers: { 'x-from-options': 'too' }, thinking: { type: 'adaptive' } });
        await model.createMessage(ask());
      } finally {
        if (saved !== undefined) process.env['ANTHROPIC_API_KEY'] = saved;
      }
      expect(fake.requests[0]!.headers).toMatchObject({ 'x-from-client': 'yes', 'x-from-options': 'too' });
      expect(fake.requests[0]!.body.thinking).toEqual({ type: 'adaptive' });
      const both = refusal(() => anthropicModel({ model: MODEL, client, apiKey: KEY }));
      expect(both).toMatchObject({ option: 'client', value: undefined });
      expect(both.message).not.toContain(KEY);
    });
  });
});

describe('a price given with the model', () => {
  it('is the model’s price: a cost budget works for a model the table does not know, and the run (and a fork of it) pins it', async () => {
    await withFake(async (_fake, url) => {
      const price = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
      const model = anthropicModel({ model: MODEL, apiKey: KEY, baseURL: url, maxRetries: 0, price, thinking: { type: 'adaptive' } });
      expect(model.price).toEqual(price);
      const store = new FileStore(path.join(tempDir(), '.durable-agent'));
      const result = await startRun({ store, model, tools: [], task: 't', budget: { maxCostUsd: 100 } });
      // One reply of a million tokens in and out, at $3 and $15 a million.
      expect(result).toMatchObject({ status: 'done', costUsd: 18 });
      const { header } = await store.load();
      expect(header.price).toEqual(price);
      expect(header.request).toEqual({ thinking: { type: 'adaptive' } });
      // A fork asks and counts as its parent did.
      const child = new FileStore(path.join(tempDir(), '.durable-agent'));
      await forkRun({ from: store, to: child });
      expect((await child.load()).header).toMatchObject({ price, request: { thinking: { type: 'adaptive' } } });
    });
  });

  it('is refused when a field is missing or not a number of dollars', () => {
    for (const price of [{ input: 3, output: 15, cacheRead: 0.3 }, { input: 3, output: -1, cacheRead: 0.3, cacheWrite: 1 }, { input: Number.NaN, output: 1, cacheRead: 1, cacheWrite: 1 }]) {
      expect(() => anthropicModel({ model: MODEL, apiKey: KEY, price: price as never })).toThrow(ModelPriceError);
    }
    const error = (() => {
      try {
        anthropicModel({ model: MODEL, apiKey: KEY, price: { input: 3, output: 15, cacheRead: 0.3 } as never });
      } catch (e) {
        return e as ModelPriceError;
      }
      throw new Error('accepted');
    })();
    expect(error).toMatchObject({ name: 'ModelPriceError', kind: 'refused', fields: ['cacheWrite'] });
    expect(error.message).toContain('--price input=3,output=15,cache-read=0.3,cache-write=3.75');
  });
});
