/**
 * The SDK's warning about a deprecated model (or a deprecated thinking mode), which it prints
 * with console.warn on every request, is said once per model through the run's own output (a
 * model-notice event, a "[model]" line), and the SDK's copy is held back; every other warning
 * goes through untouched.
 */
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { anthropicModel } from '../../src/model/anthropic-model.ts';
import { DEPRECATED_MODELS, isSdkModelWarning, modelNotices, noticeOfSdkWarning, withSdkWarningsHeld } from '../../src/model/model-notices.ts';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { detailLine } from '../../src/words/run-lines.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { assistantTurns, FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
const SDK_WARNING = /The model '.+' is deprecated and will reach end-of-life/;
const SCRIPT = [toolUseReply([{ id: 'toolu_a', name: 'lookup', input: { q: 'x' } }]), endTurnReply('done')];

async function withFake<T>(body: (fake: FakeAnthropic, url: string) => Promise<T>): Promise<T> {
  const fake = new FakeAnthropic((request) => ({ reply: SCRIPT[Math.min(assistantTurns(request), 1)]! }));
  const url = await fake.start();
  try {
    return await body(fake, url);
  } finally {
    await fake.stop();
  }
}

const ask = { system: null, messages: [{ role: 'user' as const, content: 'hi' }], tools: [], maxTokens: 4_000 };

afterEach(() => vi.restoreAllMocks());

describe('the SDK’s model warnings', () => {
  it('are held back while the call runs, and only they: another warning then, and every warning after, goes through', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const held: string[] = [];
    const value = withSdkWarningsHeld(() => {
      console.warn("The model 'claude-sonnet-4-5' is deprecated and will reach end-of-life on November 30th, 2026\nPlease migrate to a newer model.");
      console.warn("Using Claude with claude-opus-4-6 and 'thinking.type=enabled' is deprecated. Use 'thinking.type=adaptive' instead");
      console.warn('something else', 42);
      return 7;
    }, (message) => held.push(message));
    expect(value).toBe(7);
    expect(held).toHaveLength(2);
    expect(warn.mock.calls).toEqual([['something else', 42]]);
    console.warn("The model 'claude-sonnet-4-5' is deprecated and will reach end-of-life on November 30th, 2026");
    expect(warn).toHaveBeenCalledTimes(2);
  });

  it('are said in our words for the models the table knows, and in the SDK’s first line for one it does not', () => {
    expect(modelNotices('claude-sonnet-4-5-20250929')).toEqual([expect.stringContaining('claude-sonnet-4-5-20250929 is deprecated and reaches end of life on 2026-11-30')]);
    expect(modelNotices('claude-opus-4-6', 'enabled')).toEqual([expect.stringContaining('--thinking adaptive')]);
    expect(modelNotices('claude-opus-4-6', 'adaptive')).toEqual([]);
    expect(Object.keys(DEPRECATED_MODELS)).toEqual(['claude-mythos-preview', 'claude-opus-4-5', 'claude-opus-4-5-20251101', 'claude-sonnet-4-5', 'claude-sonnet-4-5-20250929']);
    const sdk = "The model 'claude-future-1' is deprecated and will reach end-of-life on May 1st, 2028\nPlease migrate to a newer model.";
    expect(isSdkModelWarning(sdk)).toBe(true);
    expect(noticeOfSdkWarning(sdk, [])).toBe("The model 'claude-future-1' is deprecated and will reach end-of-life on May 1st, 2028");
    expect(noticeOfSdkWarning(sdk, modelNotices('claude-sonnet-4-5'))).toBeNull();
  });
});

describe('a deprecated model through the real SDK', () => {
  it('is told once to onNotice over many requests, and the SDK prints nothing', async () => {
    await withFake(async (fake, url) => {
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      const model = anthropicModel({ model: 'claude-sonnet-4-5', apiKey: KEY, baseURL: url, maxRetries: 0 });
      const told: string[] = [];
      for (let i = 0; i < 3; i++) await model.createMessage({ ...ask, onNotice: (notice) => told.push(notice) });
      expect(fake.requests).toHaveLength(3);
      expect(told).toEqual(['claude-sonnet-4-5 is deprecated and reaches end of life on 2026-11-30: move the run\'s agent to a newer model (https://docs.anthropic.com/en/docs/resources/model-deprecations).']);
      expect(warn).not.toHaveBeenCalled();
      // What the SDK alone does, for comparison: a warning on every request.
      const client = new Anthropic({ apiKey: KEY, baseURL: url, maxRetries: 0 });
      for (let i = 0; i < 2; i++) await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
      expect(warn.mock.calls.filter(([message]) => SDK_WARNING.test(String(message)))).toHaveLength(2);
    });
  });

  it('asked without onNotice, says it with one console.warn of its own (not the SDK’s, not per request)', async () => {
    await withFake(async (_fake, url) => {
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      const model = anthropicModel({ model: 'claude-opus-4-6', apiKey: KEY, baseURL: url, maxRetries: 0, stream: false, thinking: { type: 'enabled', budget_tokens: 1_024 } });
      for (let i = 0; i < 3; i++) await model.createMessage(ask);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]![0])).toMatch(/^\[durable-agent\] thinking with a fixed budget is deprecated for claude-opus-4-6/);
      expect(warn.mock.calls.flat().some((arg) => SDK_WARNING.test(String(arg)))).toBe(false);
    });
  });

  it('is one model-notice event in a run of two model calls, printed as one [model] line', async () => {
    await withFake(async (fake, url) => {
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      const events: RunEvent[] = [];
      const { tools } = countingTools();
      const model = anthropicModel({ model: 'claude-opus-4-5-20251101', apiKey: KEY, baseURL: url, maxRetries: 0 });
      const result = await startRun({ store: new FileStore(path.join(tempDir(), '.durable-agent')), model, tools, task: 't', observer: (e) => events.push(e) });
      expect(result.status).toBe('done');
      expect(fake.requests).toHaveLength(2);
      const notices = events.filter((e) => e.type === 'model-notice');
      expect(notices).toHaveLength(1);
      expect(detailLine(notices[0]!, false)).toBe(
        "[model] claude-opus-4-5-20251101 is deprecated and reaches end of life on 2027-01-22: move the run's agent to a newer model (https://docs.anthropic.com/en/docs/resources/model-deprecations).",
      );
      expect(warn).not.toHaveBeenCalled();
    });
  });
});
