/**
 * Streamed replies through the real SDK against the fake API on 127.0.0.1: the pieces arrive
 * before the reply is whole, the reply is assembled whole, a stream that breaks off is sent
 * again like a failed request, and nothing of a broken-off stream reaches the journal.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anthropicModel } from '../../src/model/anthropic-model.ts';
import { ModelCallError, type StreamDelta } from '../../src/model/model.ts';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { assistantTurns, FakeAnthropic, type FakeAnswer, streamEventsOf } from '../helpers/fake-anthropic.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const MODEL = 'claude-test-model';
const REPLY = toolUseReply([{ id: 'toolu_1', name: 'lookup', input: { q: 'the weather in Lisbon' } }], 'Let me look that up for you.');

async function withServer<T>(answer: (index: number, turn: number) => FakeAnswer, body: (url: string, server: FakeAnthropic) => Promise<T>): Promise<T> {
  const server = new FakeAnthropic((request) => answer(request.index, assistantTurns(request)));
  const url = await server.start();
  try {
    return await body(url, server);
  } finally {
    await server.stop();
  }
}

const request = (onStream?: (delta: StreamDelta) => void) => ({
  system: null,
  messages: [{ role: 'user' as const, content: 'weather?' }],
  tools: [{ name: 'lookup', description: 'look up', input_schema: { type: 'object' } }],
  maxTokens: 100,
  onStream,
});

describe('a streamed reply', () => {
  it('gives its text and its tool input piece by piece before the reply is whole, then the whole reply', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const events = streamEventsOf(REPLY, MODEL, 0, 5);
    const lastInput = events.findLastIndex((e) => (e.delta as { type?: string } | undefined)?.type === 'input_json_delta');
    await withServer(
      () => ({ stream: REPLY, chunk: 5, holdAt: { event: lastInput, until: held } }),
      async (url, server) => {
        const model = anthropicModel({ model: MODEL, apiKey: 'test-only-key', baseURL: url, maxRetries: 0 });
        const deltas: StreamDelta[] = [];
        let seenBeforeWhole: StreamDelta[] = [];
        const reply = model.createMessage(
          request((delta) => {
            deltas.push(delta);
            // Once the input has begun, the stream is held: the view must have had the pieces by then.
            if (delta.type === 'tool-input' && deltas.filter((d) => d.type === 'tool-input').length === 1) {
              setTimeout(() => {
                seenBeforeWhole = [...deltas];
                release();
              }, 50);
            }
          }),
        );
        const whole = await reply;
        expect(server.requests[0]!.body.stream).toBe(true);
        expect(seenBeforeWhole.filter((d) => d.type === 'text').map((d) => (d as { text: string }).text).join('')).toBe('Let me look that up for you.');
        expect(seenBeforeWhole).toContainEqual({ type: 'tool-use', index: 1, id: 'toolu_1', name: 'lookup' });
        const inputSoFar = seenBeforeWhole.flatMap((d) => (d.type === 'tool-input' ? [d.partialJson] : [])).join('');
        expect(inputSoFar.length).toBeGreaterThan(0);
        expect(JSON.stringify(REPLY.content[1]!.input).startsWith(inputSoFar)).toBe(true);
        expect(inputSoFar).not.toBe(JSON.stringify(REPLY.content[1]!.input));
        expect(whole).toEqual({ ...REPLY, model: MODEL });
      },
    );
  });

  it('stream: false asks for the reply whole, and gives no pieces', async () => {
    await withServer(
      () => ({ reply: REPLY }),
      async (url, server) => {
        const model = anthropicModel({ model: MODEL, apiKey: 'test-only-key', baseURL: url, maxRetries: 0, stream: false });
        const deltas: StreamDelta[] = [];
        expect(await model.createMessage(request((d) => deltas.push(d)))).toEqual({ ...REPLY, model: MODEL });
        expect(server.requests[0]!.body.stream).toBeUndefined();
        expect(deltas).toEqual([]);
      },
    );
  });

  it('a listener that throws does not break the reply', async () => {
    await withServer(
      () => ({ reply: REPLY }),
      async (url) => {
        const model = anthropicModel({ model: MODEL, apiKey: 'test-only-key', baseURL: url, maxRetries: 0 });
        const reply = await model.createMessage(
          request(() => {
            throw new Error('a broken view');
          }),
        );
        expect(reply.content).toEqual(REPLY.content);
      },
    );
  });
});

describe('a stream that breaks off', () => {
  const dropped = streamEventsOf(REPLY, MODEL, 0).findIndex((e) => (e.delta as { type?: string } | undefined)?.type === 'input_json_delta');

  for (const [how, breakOff] of [
    ['a reset connection', { dropAt: dropped }],
    ['an error event (overloaded_error)', { errorAt: dropped }],
  ] as const) {
    it(`is sent again after ${how}, with the SDK's backoff; the view is told to drop what it had; the journal holds the whole reply once`, async () => {
      await withServer(
        (index, turn) => (turn > 0 ? { reply: endTurnReply('sunny') } : index === 0 ? { stream: REPLY, ...breakOff } : { reply: REPLY }),
        async (url, server) => {
          const model = anthropicModel({ model: MODEL, apiKey: 'test-only-key', baseURL: url, maxRetries: 2 });
          const store = new FileStore(path.join(tempDir(), '.durable-agent'));
          const events: RunEvent[] = [];
          const started = Date.now();
          const result = await startRun({ store, model, tools: countingTools().tools, task: 'weather?', observer: (e) => events.push(e) });
          expect(result).toMatchObject({ status: 'done', text: 'sunny' });
          expect(server.requests).toHaveLength(3);
          // The SDK's first backoff: 0.5 s, less up to a quarter.
          expect(Date.now() - started).toBeGreaterThanOrEqual(375);
          const deltas = events.flatMap((e) => (e.type === 'model-stream' ? [e.delta] : []));
          const restart = deltas.findIndex((d) => d.type === 'restart');
          expect(restart).toBeGreaterThan(0);
          expect(deltas[restart]).toMatchObject({ type: 'restart', attempt: 1 });
          // After the restart, the whole reply again from its first piece.
          const after = deltas.slice(restart + 1).filter((d) => d.type === 'text').map((d) => (d as { text: string }).text).join('');
          expect(after.startsWith('Let me look that up for you.')).toBe(true);
          const loaded = await store.load();
          expect(loaded.records.map((r) => r.record.event)).toEqual(['START', 'MODEL_USAGE', 'MODEL_REPLY', 'TOOL_RESULT', 'CLOSE_TURN', 'MODEL_USAGE', 'MODEL_REPLY']);
          expect(foldJournal(store.location, loaded).context.messages[1]).toEqual({ role: 'assistant', content: REPLY.content });
          store.close();
        },
      );
    });
  }

  it('when every attempt breaks off, the call fails as a transient ModelCallError once retries are used up; nothing but the start is written', async () => {
    await withServer(
      () => ({ stream: REPLY, dropAt: dropped }),
      async (url, server) => {
        const model = anthropicModel({ model: MODEL, apiKey: 'test-only-key', baseURL: url, maxRetries: 1, streamRetryDelayMs: () => 10 });
        const store = new FileStore(path.join(tempDir(), '.durable-agent'));
        const error = await startRun({ store, model, tools: countingTools().tools, task: 'weather?' }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ModelCallError);
        expect(error).toMatchObject({ transient: true });
        expect((error as Error).message).toContain(`The Anthropic API's reply for ${MODEL} broke off mid-stream: the reply's stream broke off 2 times`);
        expect((error as Error).message).toContain('The run is saved: resume it later.');
        expect(server.requests).toHaveLength(2);
        expect((await store.load()).records.map((r) => r.record.event)).toEqual(['START']);
        store.close();
      },
    );
  });
});
