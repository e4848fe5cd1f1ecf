/**
 * Thinking blocks go back as they came: a thinking block (with its signature) and a
 * redacted_thinking block of reply N are in request N+1 byte for byte, across a tool turn and
 * across a crash and resume, streamed or whole; the journal keeps them so. The fake Messages API
 * signs the blocks it issues and answers 400, as the real one does, when one comes back altered
 * or is missing from the tool loop's assistant turn: so the tests that pass prove the bytes.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ContentBlock, Message } from '../../machines/agent-loop.types.ts';
import { anthropicModel, isThinkingBlock, withCacheBreakpoint, withoutNulls } from '../../src/model/anthropic-model.ts';
import type { Model } from '../../src/model/model.ts';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { assistantTurns, FakeAnthropic, type ReceivedRequest } from '../helpers/fake-anthropic.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
const MODEL = 'claude-test-model';
const SCRIPT = [toolUseReply([{ id: 'toolu_a', name: 'lookup', input: { q: 'rates' } }], 'Looking it up.'), endTurnReply('The rate is 4%.')];

async function withFake<T>(body: (fake: FakeAnthropic, url: string) => Promise<T>): Promise<T> {
  const fake = new FakeAnthropic((request) => ({ reply: SCRIPT[assistantTurns(request)]! }), { redactedThinking: true });
  const url = await fake.start();
  try {
    return await body(fake, url);
  } finally {
    await fake.stop();
  }
}

const thinkingModel = (url: string, stream: boolean) =>
  anthropicModel({ model: MODEL, apiKey: KEY, baseURL: url, maxRetries: 0, stream, thinking: { type: 'enabled', budget_tokens: 2_000 } });

const newStore = () => new FileStore(path.join(tempDir(), '.durable-agent'));

/** The thinking blocks of each assistant message a request sends back. */
function thoughtsSent(request: ReceivedRequest): ContentBlock[][] {
  return request.body.messages.filter((m) => m.role === 'assistant').map((m) => (typeof m.content === 'string' ? [] : m.content.filter(isThinkingBlock)));
}

/** The journal's assistant messages (what a resume sends). */
async function storedReplies(store: FileStore): Promise<Message[]> {
  const view = foldJournal(store.location, await store.load());
  return view.context.messages.filter((m) => m.role === 'assistant');
}

describe.each([true, false])('thinking blocks, streamed: %s', (stream) => {
  it('of reply 1 are in request 2 byte for byte across the tool turn, and in the journal', async () => {
    await withFake(async (fake, url) => {
      const { tools, counter } = countingTools();
      const store = newStore();
      const result = await startRun({ store, model: thinkingModel(url, stream), tools, task: 'What is the rate?', maxTokens: 8_000 });
      expect(result).toMatchObject({ status: 'done', text: 'The rate is 4%.' });
      expect(counter.of('toolu_a')).toBe(1);
      expect(fake.requests).toHaveLength(2);
      expect(fake.thinkingBlocksIssued).toBe(4);
      // Request 2 carried reply 1's thinking and redacted_thinking, each equal to what was issued (the fake checks the bytes).
      expect(fake.thinkingBlocksVerified).toBe(2);
      const [sent] = thoughtsSent(fake.requests[1]!);
      expect(sent!.map((b) => b.type)).toEqual(['thinking', 'redacted_thinking']);
      expect(Object.keys(sent![0]!)).toEqual(['type', 'thinking', 'signature']);
      const stored = await storedReplies(store);
      expect((stored[0]!.content as ContentBlock[]).slice(0, 2)).toEqual(sent);
      expect(JSON.stringify((stored[0]!.content as ContentBlock[]).slice(0, 2))).toBe(JSON.stringify(sent));
    });
  });

  it('come back unchanged after a crash right after checkpoint A and a resume by a new process’s model', async () => {
    await withFake(async (fake, url) => {
      const { tools, counter } = countingTools();
      const store = newStore();
      await expect(startRun({ store, model: thinkingModel(url, stream), tools, task: 'What is the rate?', maxTokens: 8_000, crashAfter: 'after-save-a:1' })).rejects.toThrow(SimulatedCrash);
      expect(fake.requests).toHaveLength(1);
      const result = await resumeRun({ store, model: thinkingModel(url, stream), tools, maxTokens: 8_000 });
      expect(result).toMatchObject({ status: 'done', text: 'The rate is 4%.' });
      expect(counter.of('toolu_a')).toBe(1);
      expect(fake.thinkingBlocksVerified).toBe(2);
      expect(thoughtsSent(fake.requests[1]!)[0]!.map((b) => b.type)).toEqual(['thinking', 'redacted_thinking']);
    });
  });
});

describe('the fake holds a client to the API’s rule', () => {
  /** A model that changes what it sends back: the API must refuse it, so the passing tests above mean something. */
  function tampering(inner: Model, change: (content: ContentBlock[]) => ContentBlock[]): Model {
    return {
      name: inner.name,
      createMessage: (request) =>
        inner.createMessage({
          ...request,
          messages: request.messages.map((m) => (m.role === 'assistant' && typeof m.content !== 'string' ? { ...m, content: change(m.content) } : m)),
        }),
    };
  }

  it.each([
    ['an altered thinking text', (content: ContentBlock[]) => content.map((b) => (b.type === 'thinking' ? { ...b, thinking: `${String(b.thinking)} ` } : b)), 'Invalid `signature` in `thinking` block'],
    ['redacted data re-encoded', (content: ContentBlock[]) => content.map((b) => (b.type === 'redacted_thinking' ? { ...b, data: `${String(b.data)}==` } : b)), 'Invalid `signature` in `redacted_thinking` block'],
    ['its keys in another order', (content: ContentBlock[]) => content.map((b) => (b.type === 'thinking' ? { signature: b.signature, type: b.type, thinking: b.thinking } : b)), 'Invalid `signature`'],
    ['the thinking dropped', (content: ContentBlock[]) => content.filter((b) => !isThinkingBlock(b)), 'Expected `thinking` or `redacted_thinking`, but found `text`'],
  ])('%s: 400 invalid_request_error, and the run stops with it', async (_label, change, says) => {
    await withFake(async (fake, url) => {
      const { tools } = countingTools();
      const model = tampering(thinkingModel(url, false), change);
      const error = await startRun({ store: newStore(), model, tools, task: 'What is the rate?', maxTokens: 8_000 }).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'ModelCallError', status: 400 });
      expect((error as Error).message).toContain(says);
      expect(fake.thinkingBlocksVerified).toBe(0);
    });
  });
});

describe('on the way back', () => {
  it('withoutNulls leaves thinking blocks as they came, nulls included; other blocks lose their nulls', () => {
    const thinking = { type: 'thinking', thinking: 'x', signature: 's', extra: null };
    const redacted = { type: 'redacted_thinking', data: 'd', note: null };
    expect(withoutNulls(thinking)).toBe(thinking);
    expect(withoutNulls(redacted)).toBe(redacted);
    expect(withoutNulls({ type: 'text', text: 't', citations: null })).toEqual({ type: 'text', text: 't' });
  });

  it('the cache breakpoint never goes on a thinking block: on the last block that may carry one, else nowhere', () => {
    const thought = { type: 'thinking', thinking: 'x', signature: 's' };
    const marked = withCacheBreakpoint([{ role: 'user', content: [{ type: 'text', text: 'a' }, thought] }]);
    expect(marked[0]!.content).toEqual([{ type: 'text', text: 'a', cache_control: { type: 'ephemeral' } }, thought]);
    const none = withCacheBreakpoint([{ role: 'user', content: [thought, { type: 'redacted_thinking', data: 'd' }] }]);
    expect(JSON.stringify(none)).not.toContain('cache_control');
    // The loop's own shape: the assistant's thinking stays unmarked, the tool results take the mark.
    const loop = withCacheBreakpoint([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [thought, { type: 'tool_use', id: 't1', name: 'lookup', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] },
    ]);
    expect(loop[1]!.content).toEqual([thought, { type: 'tool_use', id: 't1', name: 'lookup', input: {} }]);
    expect((loop[2]!.content as ContentBlock[])[0]!.cache_control).toEqual({ type: 'ephemeral' });
  });
});
