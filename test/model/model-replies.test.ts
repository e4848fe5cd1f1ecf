/**
 * Replies a model should not send, each a clear recorded outcome on a real file store: a null
 * or non-object content block, no usage (or part of it), end_turn naming tools, pause_turn
 * without end; and journals an earlier version wrote from such replies, which resume or are
 * refused with a clear message, never a TypeError.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentContext, AgentStateName, ContentBlock, ModelReply } from '../../machines/agent-loop.types.ts';
import { MAX_PAUSES_IN_A_ROW } from '../../machines/agent-loop.types.ts';
import { endTurnReply, scriptedModel, type ScriptedStep, stopReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { readRunStatus } from '../../src/runtime/run-status.ts';
import { StoreCorruptError } from '../../src/store/errors.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { encodeRecord } from '../../src/store/journal/journal-codec.ts';
import type { RecordEvent } from '../../src/store/journal/journal-record.ts';
import { anthropicModel } from '../../src/model/anthropic-model.ts';
import { usageOf } from '../../src/model/reply-check.ts';
import { pendingDecisions } from '../../src/awaits/decide.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { toolUseProblems } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';

function newStore(): FileStore {
  return new FileStore(path.join(tempDir(), '.durable-agent'));
}

function collect(): { events: RunEvent[]; observer: (e: RunEvent) => void } {
  const events: RunEvent[] = [];
  return { events, observer: (e) => events.push(e) };
}

async function lastRecord(store: FileStore) {
  const loaded = await store.load();
  return loaded.records[loaded.records.length - 1]!.record;
}

const lookup = (id: string) => toolUseReply([{ id, name: 'lookup', input: { q: id } }]);
const email = (id: string) => toolUseReply([{ id, name: 'send_email', input: { to: id } }]);

/** A reply whose content has a block that is not one (the API never sends it; a gateway or a bug might). */
function withBadBlock(reply: ModelReply, bad: unknown): ModelReply {
  return { ...reply, content: [...reply.content, bad as ContentBlock] };
}

describe('a reply with a content block that is not one', () => {
  it.each([
    ['null', null, 'content block 1 is null, not a content block'],
    ['a string', 'oops', 'content block 1 is a string, not a content block'],
    ['an object without a type', { text: 'x' }, 'content block 1 has no type'],
  ])('%s: the run fails as an invalid reply, recorded, nothing executed, and a resume asks again', async (_label, bad, says) => {
    const { tools, counter } = countingTools();
    const store = newStore();
    const first = await startRun({ store, model: scriptedModel([withBadBlock(email('e1'), bad)]), tools, task: 't' });
    expect(first.status).toBe('failed');
    expect(first.failure).toMatchObject({ reason: 'invalid_reply', retryable: true });
    expect(first.failure!.message).toContain(says);
    expect(counter.of('e1')).toBe(0);
    expect(await lastRecord(store)).toMatchObject({ event: 'MODEL_REPLY_INVALID', state: 'failed' });

    const second = await resumeRun({ store, model: scriptedModel([email('e1'), endTurnReply('sent')]), tools });
    expect(second).toMatchObject({ status: 'done', text: 'sent' });
    expect(counter.of('e1')).toBe(1);
    expect(toolUseProblems(foldJournal(store.location, await store.load()).context.messages)).toEqual([]);
  });
});

describe('a reply without usage, or with part of it', () => {
  it('counts the missing figures as 0, says so, and goes on', async () => {
    const { tools } = countingTools();
    const store = newStore();
    const noUsage = { ...lookup('l1'), usage: undefined } as unknown as ModelReply;
    const partial = { ...endTurnReply('done'), usage: { input: 7 } } as unknown as ModelReply;
    const { events, observer } = collect();
    const result = await startRun({ store, model: scriptedModel([noUsage, partial]), tools, task: 't', observer });
    expect(result).toMatchObject({ status: 'done', text: 'done' });
    expect(result.usage).toEqual({ input: 7, output: 0, cacheRead: 0, cacheWrite: 0 });
    const notes = events.flatMap((e) => (e.type === 'model-reply' ? [e.usageNote] : []));
    expect(notes).toEqual([
      'the reply carried no usage; its tokens are counted as 0',
      "the reply's usage lacked output, cacheRead, cacheWrite; counted as 0",
    ]);
    const loaded = await store.load();
    const usageNotes = loaded.records.filter((s) => s.record.event === 'MODEL_USAGE').map((s) => s.record.note?.usage);
    expect(usageNotes).toEqual(notes);
    expect((await readRunStatus(store)).usage).toEqual(result.usage);
  });
});

describe('a reply that ends the turn but names tools', () => {
  it.each(['end_turn', 'stop_sequence'])('%s: invalid, recorded, nothing executed, and a resume asks again', async (stopReason) => {
    const { tools, counter } = countingTools();
    const store = newStore();
    const endsWithTool: ModelReply = { ...email('e1'), stop_reason: stopReason };
    const first = await startRun({ store, model: scriptedModel([endsWithTool]), tools, task: 't' });
    expect(first.status).toBe('failed');
    expect(first.failure).toMatchObject({ reason: 'invalid_reply', retryable: true });
    expect(first.failure!.message).toContain(`the reply ended the turn (stop_reason=${stopReason}) but named tools; nothing was executed`);
    expect(counter.of('e1')).toBe(0);
    expect(await lastRecord(store)).toMatchObject({ event: 'MODEL_REPLY_INVALID', state: 'failed' });
    // Nothing unanswered went into the conversation.
    expect(toolUseProblems(foldJournal(store.location, await store.load()).context.messages)).toEqual([]);

    const second = await resumeRun({ store, model: scriptedModel([email('e1'), endTurnReply('sent once')]), tools });
    expect(second).toMatchObject({ status: 'done', text: 'sent once' });
    expect(counter.of('e1')).toBe(1);
  });
});

describe('pause_turn, again and again', () => {
  const pause = (n: number) => ({ ...stopReply('pause_turn', `still searching ${n}`), usage: { input: 10, output: 1, cacheRead: 0, cacheWrite: 0 } });
  const pauses = (count: number, from = 1) => Array.from({ length: count }, (_, i) => pause(from + i));

  it(`fails the run past ${MAX_PAUSES_IN_A_ROW} in a row (pause_limit), counting every pause's tokens; a resume continues`, async () => {
    const { tools } = countingTools();
    const store = newStore();
    const script: ScriptedStep[] = [...pauses(MAX_PAUSES_IN_A_ROW + 1), endTurnReply('found it')];
    const first = await startRun({ store, model: scriptedModel(script), tools, task: 't' });
    expect(first.status).toBe('failed');
    expect(first.failure).toMatchObject({ reason: 'pause_limit', retryable: true });
    expect(first.failure!.message).toContain(`more than ${MAX_PAUSES_IN_A_ROW} times in a row`);
    expect(first.usage).toEqual({ input: 10 * (MAX_PAUSES_IN_A_ROW + 1), output: MAX_PAUSES_IN_A_ROW + 1, cacheRead: 0, cacheWrite: 0 });
    // Every paused reply is kept, the last one too: the resume sends them all back.
    const messages = foldJournal(store.location, await store.load()).context.messages;
    expect(messages.filter((m) => m.role === 'assistant')).toHaveLength(MAX_PAUSES_IN_A_ROW + 1);

    const { events, observer } = collect();
    const second = await resumeRun({ store, model: scriptedModel(script), tools, observer });
    expect(second).toMatchObject({ status: 'done', text: 'found it' });
    expect(events.some((e) => e.type === 'reopened')).toBe(true);
  });

  it('takes its limit from the start options, and any other reply starts the count again', async () => {
    const { tools } = countingTools();
    const store = newStore();
    // Two pauses, a tool turn, two pauses, the answer: never three in a row.
    const script: ScriptedStep[] = [...pauses(2), lookup('l1'), ...pauses(2, 3), endTurnReply('done')];
    const result = await startRun({ store, model: scriptedModel(script), tools, task: 't', maxPausesInARow: 2 });
    expect(result).toMatchObject({ status: 'done', text: 'done' });

    const strict = newStore();
    const failed = await startRun({ store: strict, model: scriptedModel(script), tools, task: 't', maxPausesInARow: 1 });
    expect(failed.failure).toMatchObject({ reason: 'pause_limit' });
    expect(failed.failure!.message).toContain('more than 1 times in a row');

    for (const bad of [-1, 1.5, Number.NaN, Infinity]) {
      await expect(startRun({ store: newStore(), model: scriptedModel(script), tools, task: 't', maxPausesInARow: bad })).rejects.toThrow(
        /maxPausesInARow must be a whole number of 0 or more/,
      );
    }
  });
});

/**
 * Journals as an earlier version wrote them from replies it did not check: it ran a real run up
 * to a point, then (as that version did) stored the context it computed from the bad reply.
 */
async function journalWrittenBefore(
  store: FileStore,
  crashAfter: string,
  steps: ScriptedStep[],
  write: (context: AgentContext) => Array<{ event: RecordEvent; state: AgentStateName; context: AgentContext }>,
): Promise<void> {
  const { tools } = countingTools();
  await expect(startRun({ store, model: scriptedModel(steps), tools, task: 't', maxTurns: 1, crashAfter })).rejects.toThrow(SimulatedCrash);
  store.close();
  const loaded = await store.load({ repair: true });
  let view = foldJournal(store.location, loaded);
  let seq = loaded.records.length;
  for (const next of write(view.context)) {
    const record = encodeRecord(view, { seq, at: Date.now(), ...next });
    await store.append(record);
    view = { state: next.state, context: next.context, ledger: view.ledger };
    seq += 1;
  }
  store.close();
}

describe('journals an earlier version wrote from replies it did not check', () => {
  it('a held reply with a null block and token counts stored as null: the resume refuses the reply, then goes on', async () => {
    const store = newStore();
    const badHeld: ModelReply = { ...withBadBlock(email('e2'), null), usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } };
    await journalWrittenBefore(store, 'after-save-b:1', [lookup('l1')], (context) => [
      // A reply whose usage lacked some figures was summed to NaN, which JSON stores as null.
      { event: 'MODEL_USAGE', state: 'closed', context: { ...context, usage: { ...context.usage, output: null as unknown as number, cacheRead: NaN } } },
      { event: 'MODEL_REPLY', state: 'stoppedAtMaxTurns', context: { ...context, heldReply: badHeld } },
    ]);
    expect((await readRunStatus(store)).state).toBe('stoppedAtMaxTurns');

    const { tools, counter } = countingTools();
    const first = await resumeRun({ store, model: scriptedModel([lookup('l1'), endTurnReply('never asked')]), tools, maxTurns: 3 });
    expect(first.status).toBe('failed');
    expect(first.failure).toMatchObject({ reason: 'invalid_reply', retryable: true });
    expect(first.failure!.message).toContain('content block 1 is null');
    expect(counter.of('e2')).toBe(0);
    for (const figure of Object.values(first.usage)) expect(Number.isFinite(figure)).toBe(true);

    const second = await resumeRun({ store, model: scriptedModel([lookup('l1'), endTurnReply('asked again')]), tools });
    expect(second).toMatchObject({ status: 'done', text: 'asked again' });
  });

  it('an assistant message with a null block (written by hand or by another writer): refused with a clear message, by resume and status alike', async () => {
    const store = newStore();
    const { tools } = countingTools();
    await expect(startRun({ store, model: scriptedModel([lookup('l1')]), tools, task: 't', crashAfter: 'after-save-b:1' })).rejects.toThrow(SimulatedCrash);
    store.close();
    const loaded = await store.load({ repair: true });
    const messages = foldJournal(store.location, loaded).context.messages;
    // encodeRecord itself cannot write such a message: the record is made by hand.
    await store.append({
      seq: loaded.records.length,
      at: Date.now(),
      state: 'awaitingModel',
      event: 'MODEL_REPLY',
      messages: { from: messages.length, add: [{ role: 'assistant', content: [null as unknown as ContentBlock] }] },
    });
    store.close();
    for (const attempt of [() => resumeRun({ store, model: scriptedModel([]), tools }), () => readRunStatus(store)]) {
      const error = await attempt().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreCorruptError);
      expect((error as Error).message).toContain("an assistant message's content block 0 is null, not a content block");
      expect((error as Error).message).toContain('start over with --fresh');
    }
  });
});

describe('through the real SDK, from an endpoint that sends such replies', () => {
  it('a null block fails the run as an invalid reply; a reply without usage counts 0 and goes on', async () => {
    const lookupCall = { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'a' } };
    const bodies: Array<Record<string, unknown>> = [
      { id: 'm1', type: 'message', role: 'assistant', model: 'm', content: [lookupCall, null], stop_reason: 'tool_use', usage: { input_tokens: 5, output_tokens: 1 } },
      { id: 'm2', type: 'message', role: 'assistant', model: 'm', content: [lookupCall], stop_reason: 'tool_use' },
      { id: 'm3', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'done', citations: null }], stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 2 } },
    ];
    let next = 0;
    const server = new FakeAnthropic(() => ({ body: bodies[next++]! }));
    const url = await server.start();
    try {
      // Such bodies come whole (a stream is assembled by the SDK, which fills in what they lack).
      const model = anthropicModel({ model: 'm', apiKey: 'test-only-key', baseURL: url, maxRetries: 0, stream: false });
      const { tools, counter } = countingTools();
      const store = newStore();
      const first = await startRun({ store, model, tools, task: 't' });
      expect(first.failure).toMatchObject({ reason: 'invalid_reply' });
      expect(first.failure!.message).toContain('content block 1 is null');
      expect(counter.of('toolu_1')).toBe(0);
      const second = await resumeRun({ store, model, tools });
      expect(second).toMatchObject({ status: 'done', text: 'done' });
      expect(counter.of('toolu_1')).toBe(1);
      expect(second.usage).toEqual({ input: 8, output: 3, cacheRead: 0, cacheWrite: 0 });
    } finally {
      await server.stop();
    }
  });
});

describe('a tool_use id the inboxes could not name', () => {
  it('is refused as an invalid reply before checkpoint A: nothing runs or waits, and pending still reads the run', async () => {
    const { tools, counter } = countingTools();
    const store = newStore();
    const escaping = { ...toolUseReply([{ id: 'toolu_../../../../tmp/pwn', name: 'send_email', input: { to: 'x' } }]) };
    const result = await startRun({ store, model: scriptedModel([escaping]), tools, task: 't', requireApproval: ['send_email'] });
    expect(result.status).toBe('failed');
    expect(result.failure!.message).toContain('tool_use_id "toolu_../../../../tmp/pwn" is not an id the Messages API allows');
    expect(counter.of('toolu_../../../../tmp/pwn')).toBe(0);
    expect(await pendingDecisions(store)).toEqual([]);
    expect((await readRunStatus(store)).state).toBe('failed');
    const second = await resumeRun({ store, model: scriptedModel([toolUseReply([{ id: 'toolu_ok', name: 'lookup', input: { q: 'a' } }]), endTurnReply('fine')]), tools });
    expect(second).toMatchObject({ status: 'done', text: 'fine' });
  });
});

describe('token figures that cannot be counted, from an endpoint that sends them', () => {
  it('fractional and text usage stop a token budget: the reply is refused naming the figures, nothing runs; never counted as nothing', async () => {
    const lookupCall = { type: 'tool_use', id: 'toolu_x', name: 'lookup', input: { q: 'a' } };
    const hostile = { id: 'm', type: 'message', role: 'assistant', model: 'm', content: [lookupCall], stop_reason: 'tool_use', usage: { input_tokens: 1000.5, output_tokens: '500' } };
    const server = new FakeAnthropic(() => ({ body: hostile }));
    const url = await server.start();
    try {
      const model = anthropicModel({ model: 'm', apiKey: 'test-only-key', baseURL: url, maxRetries: 0, stream: false });
      const { tools, counter } = countingTools();
      const store = newStore();
      const result = await startRun({ store, model, tools, task: 't', maxTurns: 30, budget: { maxTotalTokens: 5000 } });
      expect(result.status).toBe('failed');
      expect(result.failure).toMatchObject({ reason: 'invalid_reply' });
      expect(result.failure!.message).toContain('its token usage cannot be counted (input = 1000.5, output = "500": not a whole number of tokens)');
      expect(counter.of('toolu_x')).toBe(0);
      expect(server.requests).toHaveLength(1);
      // A resume asks again, and is refused again: the budget is never passed on uncounted tokens.
      expect((await resumeRun({ store, model, tools })).status).toBe('failed');
      expect(counter.of('toolu_x')).toBe(0);
    } finally {
      await server.stop();
    }
  });

  it('negative, huge and unsafe figures are refused the same way; a figure left out still counts as 0', () => {
    for (const figure of [-3, 1e300, 2 ** 53 + 1, Number.NaN, Infinity, '12', true, {}]) {
      const { problem } = usageOf({ input: figure, output: 1, cacheRead: 0, cacheWrite: 0 });
      expect(problem, String(figure)).toMatch(/^its token usage cannot be counted \(input = .*: not a whole number of tokens\)/);
    }
    expect(usageOf({ input: 7, output: 1 })).toEqual({ usage: { input: 7, output: 1, cacheRead: 0, cacheWrite: 0 }, note: "the reply's usage lacked cacheRead, cacheWrite; counted as 0", problem: null });
  });
});

describe('a reply from a Model of ones own that JSON cannot hold', () => {
  it('is refused as an invalid reply, recorded, with nothing executed', async () => {
    const { tools, counter } = countingTools();
    const store = newStore();
    const reply: ModelReply = {
      content: [{ type: 'tool_use', id: 'e1', name: 'send_email', input: { to: 'x', attempt: 1n } }],
      stop_reason: 'tool_use',
      usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 },
    };
    const first = await startRun({ store, model: scriptedModel([reply]), tools, task: 't' });
    expect(first.failure).toMatchObject({ reason: 'invalid_reply', retryable: true });
    expect(first.failure!.message).toContain('the reply holds a value the journal cannot record (Do not know how to serialize a BigInt)');
    expect(counter.of('e1')).toBe(0);
    expect(await lastRecord(store)).toMatchObject({ event: 'MODEL_REPLY_INVALID', state: 'failed' });
    const second = await resumeRun({ store, model: scriptedModel([email('e1'), endTurnReply('sent')]), tools });
    expect(second).toMatchObject({ status: 'done', text: 'sent' });
  });
});
