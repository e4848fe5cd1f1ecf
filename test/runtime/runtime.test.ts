/**
 * The runtime in-process on a real file store: parallel tool use, reconcile on resume, tool
 * failures, stop reasons, MAX_TURNS, a failed ledger write, usage accounting.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Message, ModelReply } from '../../machines/agent-loop.types.ts';
import type { Model, ModelRequest } from '../../src/model/model.ts';
import { endTurnReply, scriptedModel, ScriptExhaustedError, type ScriptedStep, stopReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun, type RunParts } from '../../src/runtime/run-api.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { readRunStatus } from '../../src/runtime/run-status.ts';
import { RunExistsError, StoreWriteError } from '../../src/store/errors.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { toolResultOf, toolUseProblems } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';

function newStore(options: { writeFaults?: string } = {}): FileStore {
  return new FileStore(path.join(tempDir(), '.durable-agent'), options);
}

async function messagesOf(store: FileStore): Promise<Message[]> {
  return foldJournal(store.location, await store.load()).context.messages;
}

function countingModel(steps: ScriptedStep[]): Model & { calls: number } {
  const inner = scriptedModel(steps);
  const model = {
    name: 'counting-scripted',
    calls: 0,
    async createMessage(request: ModelRequest): Promise<ModelReply> {
      model.calls += 1;
      return inner.createMessage(request);
    },
  };
  return model;
}

function collect(): { events: RunEvent[]; observer: (e: RunEvent) => void } {
  const events: RunEvent[] = [];
  return { events, observer: (e) => events.push(e) };
}

const reconciled = (events: RunEvent[]) =>
  events.flatMap((e) => (e.type === 'reconciled' ? [`${e.call.id}:${e.decision}`] : []));

describe('parallel tool use', () => {
  const script = (): ScriptedStep[] => [
    toolUseReply([
      { id: 't1', name: 'lookup', input: { q: 'a' } },
      { id: 't2', name: 'send_email', input: { to: 'x@example.com' } },
    ]),
    endTurnReply('all done'),
  ];

  it('runs every call and sends all results back in one user message, in the model’s order', async () => {
    const { tools, counter } = countingTools();
    const store = newStore();
    const result = await startRun({ store, model: scriptedModel(script()), tools, task: 'do two things' });
    expect(result).toMatchObject({ status: 'done', text: 'all done', turn: 1 });
    const messages = await messagesOf(store);
    expect(toolUseProblems(messages)).toEqual([]);
    expect(messages[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't1', content: 'answer to a' },
        { type: 'tool_result', tool_use_id: 't2', content: 'sent to x@example.com' },
      ],
    });
    expect(counter.of('t1')).toBe(1);
    expect(counter.of('t2')).toBe(1);
  });

  it('after a crash with the first of two calls recorded: reuses one, reconciles the other', async () => {
    const { tools, counter } = countingTools();
    const store = newStore();
    await expect(
      startRun({ store, model: scriptedModel(script()), tools, task: 'two', crashAfter: 'after-effect-write:1' }),
    ).rejects.toThrow(SimulatedCrash);
    expect(counter.of('t1')).toBe(1);
    expect(counter.of('t2')).toBe(0);

    const { events, observer } = collect();
    const result = await resumeRun({ store, model: scriptedModel(script()), tools, observer });
    expect(result.status).toBe('done');
    expect(reconciled(events)).toEqual(['t1:reused', 't2:unknown-reported']);
    expect(counter.of('t1')).toBe(1);
    expect(counter.of('t2')).toBe(0);
    const messages = await messagesOf(store);
    expect(toolUseProblems(messages)).toEqual([]);
    expect(toolResultOf(messages, 't1')).toMatchObject({ content: 'answer to a' });
    expect(toolResultOf(messages, 't2')).toMatchObject({ is_error: true });
    expect(String(toolResultOf(messages, 't2')!.content)).toContain('not run again, so as not to repeat its side effect');
  });
});

describe('reconcile on resume, per branch', () => {
  const oneCall = (name: string, input: unknown): ScriptedStep[] => [toolUseReply([{ id: 'c1', name, input }]), endTurnReply('finished')];

  it('ledger hit: reuses the recorded result verbatim and does not run again', async () => {
    const { tools, counter } = countingTools();
    const store = newStore();
    await expect(startRun({ store, model: scriptedModel(oneCall('send_email', { to: 'a' })), tools, task: 't', crashAfter: 'after-effect-write:1' })).rejects.toThrow(SimulatedCrash);
    const { events, observer } = collect();
    await resumeRun({ store, model: scriptedModel(oneCall('send_email', { to: 'a' })), tools, observer });
    expect(reconciled(events)).toEqual(['c1:reused']);
    expect(counter.of('c1')).toBe(1);
    expect(toolResultOf(await messagesOf(store), 'c1')).toEqual({ type: 'tool_result', tool_use_id: 'c1', content: 'sent to a' });
  });

  it('miss on a read-only tool: runs it again, once, and records it', async () => {
    const { tools, counter } = countingTools();
    const store = newStore();
    await expect(startRun({ store, model: scriptedModel(oneCall('lookup', { q: 'z' })), tools, task: 't', crashAfter: 'after-save-a:1' })).rejects.toThrow(SimulatedCrash);
    expect(counter.of('c1')).toBe(0);
    const { events, observer } = collect();
    await resumeRun({ store, model: scriptedModel(oneCall('lookup', { q: 'z' })), tools, observer });
    expect(reconciled(events)).toEqual(['c1:re-ran-read-only']);
    expect(counter.of('c1')).toBe(1);
    expect(foldJournal(store.location, await store.load()).ledger.get('c1')).toMatchObject({ kind: 'ran', content: 'answer to z' });
  });

  it('miss on a side-effecting tool that ran before the crash: is_error, unknown state, not run again', async () => {
    const { tools, counter } = countingTools();
    const store = newStore();
    await expect(startRun({ store, model: scriptedModel(oneCall('send_email', { to: 'b' })), tools, task: 't', crashAfter: 'after-tool-return:1' })).rejects.toThrow(SimulatedCrash);
    expect(counter.of('c1')).toBe(1);
    const { events, observer } = collect();
    await resumeRun({ store, model: scriptedModel(oneCall('send_email', { to: 'b' })), tools, observer });
    expect(reconciled(events)).toEqual(['c1:unknown-reported']);
    expect(counter.of('c1')).toBe(1);
    expect(toolResultOf(await messagesOf(store), 'c1')).toMatchObject({ is_error: true });
  });

  it('a point ① crash (A saved, tool not started) and a point ② crash (tool done, no ledger entry) resolve alike', async () => {
    const outcomes: unknown[] = [];
    for (const crashAfter of ['after-save-a:1', 'after-tool-return:1']) {
      const { tools } = countingTools();
      const store = newStore();
      await expect(startRun({ store, model: scriptedModel(oneCall('send_email', { to: 'c' })), tools, task: 't', crashAfter })).rejects.toThrow(SimulatedCrash);
      const status = await readRunStatus(store);
      outcomes.push({ state: status.state, pending: status.pending, ledger: status.ledgerEntries });
      const { events, observer } = collect();
      await resumeRun({ store, model: scriptedModel(oneCall('send_email', { to: 'c' })), tools, observer });
      outcomes.push(reconciled(events));
    }
    expect(outcomes[0]).toEqual(outcomes[2]);
    expect(outcomes[1]).toEqual(outcomes[3]);
    expect(outcomes[1]).toEqual(['c1:unknown-reported']);
  });

  it('verify: a side effect that happened is confirmed and not repeated', async () => {
    const { tools, counter } = countingTools();
    const store = newStore();
    await expect(startRun({ store, model: scriptedModel(oneCall('charge_card', { amount: 5 })), tools, task: 't', crashAfter: 'after-tool-return:1' })).rejects.toThrow(SimulatedCrash);
    const { events, observer } = collect();
    await resumeRun({ store, model: scriptedModel(oneCall('charge_card', { amount: 5 })), tools, observer });
    expect(reconciled(events)).toEqual(['c1:verified-done']);
    expect(counter.of('c1')).toBe(1);
    expect(toolResultOf(await messagesOf(store), 'c1')).not.toHaveProperty('is_error');
  });

  it('verify: a side effect that had not happened is run now, once, with the same idempotency key', async () => {
    const { tools, counter } = countingTools();
    const store = newStore();
    await expect(startRun({ store, model: scriptedModel(oneCall('charge_card', { amount: 5 })), tools, task: 't', crashAfter: 'after-save-a:1' })).rejects.toThrow(SimulatedCrash);
    const { events, observer } = collect();
    await resumeRun({ store, model: scriptedModel(oneCall('charge_card', { amount: 5 })), tools, observer });
    expect(reconciled(events)).toEqual(['c1:verified-not-done-ran']);
    expect(counter.of('c1')).toBe(1);
    expect(counter.keys.get('c1')).toMatch(/^da_[0-9a-f]{32}$/);
  });

  it('a crash during the resume itself is resumed again without running anything twice', async () => {
    const { tools, counter } = countingTools();
    const store = newStore();
    const steps = (): ScriptedStep[] => [
      toolUseReply([{ id: 'c1', name: 'send_email', input: { to: 'a' } }]),
      toolUseReply([{ id: 'c2', name: 'charge_card', input: { amount: 1 } }]),
      endTurnReply('ok'),
    ];
    await expect(startRun({ store, model: scriptedModel(steps()), tools, task: 't', crashAfter: 'after-effect-write:1' })).rejects.toThrow(SimulatedCrash);
    await expect(resumeRun({ store, model: scriptedModel(steps()), tools, crashAfter: 'after-tool-return:1' })).rejects.toThrow(SimulatedCrash);
    const result = await resumeRun({ store, model: scriptedModel(steps()), tools });
    expect(result.status).toBe('done');
    expect(counter.of('c1')).toBe(1);
    expect(counter.of('c2')).toBe(1);
    expect(toolUseProblems(await messagesOf(store))).toEqual([]);
  });
});

describe('bad tool calls become is_error results and the loop goes on', () => {
  it('handles a tool that throws, an unknown tool, input that breaks the schema, and a tool that hangs', async () => {
    const { tools } = countingTools();
    const store = newStore();
    const result = await startRun({
      store,
      model: scriptedModel([
        toolUseReply([
          { id: 'e1', name: 'explode', input: {} },
          { id: 'e2', name: 'no_such_tool', input: {} },
          { id: 'e3', name: 'lookup', input: { wrong: 1 } },
          { id: 'e4', name: 'hang', input: {} },
        ]),
        endTurnReply('coped'),
      ]),
      tools,
      task: 't',
    });
    expect(result).toMatchObject({ status: 'done', text: 'coped' });
    const messages = await messagesOf(store);
    expect(toolUseProblems(messages)).toEqual([]);
    expect(toolResultOf(messages, 'e1')).toMatchObject({ is_error: true, content: 'explode failed: boom' });
    expect(toolResultOf(messages, 'e2')).toMatchObject({ is_error: true });
    expect(String(toolResultOf(messages, 'e2')!.content)).toContain('Unknown tool "no_such_tool"');
    expect(String(toolResultOf(messages, 'e3')!.content)).toContain("Invalid input for lookup: input must have required property 'q'");
    expect(String(toolResultOf(messages, 'e4')!.content)).toContain('did not finish within 50 ms');
  });
});

describe('the model', () => {
  it('a scripted model that runs out is a clear error, and the run stays resumable', async () => {
    const { tools } = countingTools();
    const store = newStore();
    const short = [toolUseReply([{ id: 'c1', name: 'lookup', input: { q: 'a' } }])];
    const error = await startRun({ store, model: scriptedModel(short), tools, task: 't' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ScriptExhaustedError);
    expect((error as Error).message).toContain('holds 1 replies and was asked for reply 2');
    expect((await readRunStatus(store)).state).toBe('closed');
    const result = await resumeRun({ store, model: scriptedModel([...short, endTurnReply('now done')]), tools });
    expect(result).toMatchObject({ status: 'done', text: 'now done' });
  });

  it('sums token usage over every reply', async () => {
    const { tools } = countingTools();
    const store = newStore();
    const replies = [toolUseReply([{ id: 'c1', name: 'lookup', input: { q: 'a' } }]), endTurnReply('x')];
    replies[0]!.usage = { input: 10, output: 5, cacheRead: 3, cacheWrite: 2 };
    replies[1]!.usage = { input: 20, output: 7, cacheRead: 11, cacheWrite: 0 };
    const result = await startRun({ store, model: scriptedModel(replies), tools, task: 't' });
    expect(result.usage).toEqual({ input: 30, output: 12, cacheRead: 14, cacheWrite: 2 });
    expect((await readRunStatus(store)).usage).toEqual(result.usage);
  });

  it('a reply that arrived just before a crash is asked for again on resume, and its tokens count too', async () => {
    const { tools } = countingTools();
    const store = newStore();
    const replies = () => {
      const steps = [toolUseReply([{ id: 'c1', name: 'lookup', input: { q: 'a' } }]), endTurnReply('x')];
      steps[0]!.usage = { input: 10, output: 5, cacheRead: 1, cacheWrite: 2 };
      steps[1]!.usage = { input: 20, output: 7, cacheRead: 0, cacheWrite: 0 };
      return steps;
    };
    const first = countingModel(replies());
    await expect(startRun({ store, model: first, tools, task: 't', crashAfter: 'after-model-reply:1' })).rejects.toThrow(SimulatedCrash);
    expect(await readRunStatus(store)).toMatchObject({ state: 'awaitingModel', usage: { input: 10, output: 5, cacheRead: 1, cacheWrite: 2 } });
    const second = countingModel(replies());
    const result = await resumeRun({ store, model: second, tools });
    expect(second.calls).toBe(2);
    expect(result.usage).toEqual({ input: 40, output: 17, cacheRead: 2, cacheWrite: 4 });
  });

  it('continues after pause_turn, sending the paused content back', async () => {
    const { tools } = countingTools();
    const store = newStore();
    const result = await startRun({ store, model: scriptedModel([stopReply('pause_turn', 'thinking…'), endTurnReply('resumed and done')]), tools, task: 't' });
    expect(result).toMatchObject({ status: 'done', text: 'resumed and done' });
    const messages = await messagesOf(store);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'assistant']);
  });

  it('max_tokens fails the run without executing the cut-off reply; a resume asks again', async () => {
    const { tools, counter } = countingTools();
    const store = newStore();
    const cutOff: ModelReply = { ...toolUseReply([{ id: 'c1', name: 'send_email', input: { to: 'x' } }]), stop_reason: 'max_tokens' };
    const first = await startRun({ store, model: scriptedModel([cutOff]), tools, task: 't' });
    expect(first.status).toBe('failed');
    expect(first.failure).toMatchObject({ reason: 'max_tokens', retryable: true });
    expect(counter.of('c1')).toBe(0);
    const { events, observer } = collect();
    const second = await resumeRun({ store, model: scriptedModel([endTurnReply('short answer')]), tools, observer });
    expect(second).toMatchObject({ status: 'done', text: 'short answer' });
    expect(events.some((e) => e.type === 'reopened')).toBe(true);
  });

  it('a refusal fails the run for good; resuming does not ask the model again', async () => {
    const { tools } = countingTools();
    const store = newStore();
    const first = await startRun({ store, model: scriptedModel([stopReply('refusal')]), tools, task: 't' });
    expect(first.failure).toMatchObject({ reason: 'refusal', retryable: false });
    const model = countingModel([endTurnReply('never')]);
    const second = await resumeRun({ store, model, tools });
    expect(second.status).toBe('failed');
    expect(model.calls).toBe(0);
  });

  it('refuses a reply that reuses a tool_use_id of an earlier turn', async () => {
    const { tools, counter } = countingTools();
    const store = newStore();
    const result = await startRun({
      store,
      model: scriptedModel([
        toolUseReply([{ id: 'same', name: 'send_email', input: { to: 'a' } }]),
        toolUseReply([{ id: 'same', name: 'send_email', input: { to: 'b' } }]),
      ]),
      tools,
      task: 't',
    });
    expect(result.failure).toMatchObject({ reason: 'invalid_reply' });
    expect(result.failure!.message).toContain('tool_use_id same was already used earlier in this run');
    expect(counter.of('same')).toBe(1);
  });
});

describe('MAX_TURNS', () => {
  const threeTurns = (): ScriptedStep[] => [
    toolUseReply([{ id: 'c1', name: 'lookup', input: { q: '1' } }]),
    toolUseReply([{ id: 'c2', name: 'send_email', input: { to: '2' } }]),
    toolUseReply([{ id: 'c3', name: 'lookup', input: { q: '3' } }]),
    endTurnReply('three turns'),
  ];

  it('stops at the limit, keeps the reply it could not act on, and a resume with more turns acts on it without asking again', async () => {
    const { tools, counter } = countingTools();
    const store = newStore();
    const model = countingModel(threeTurns());
    const stopped = await startRun({ store, model, tools, task: 't', maxTurns: 1 });
    expect(stopped).toMatchObject({ status: 'stoppedAtMaxTurns', turn: 1, maxTurns: 1 });
    expect(model.calls).toBe(2);
    expect(counter.of('c2')).toBe(0);
    expect(toolUseProblems(await messagesOf(store))).toEqual([]);

    const still = await resumeRun({ store, model, tools });
    expect(still.status).toBe('stoppedAtMaxTurns');
    expect(model.calls).toBe(2);

    const done = await resumeRun({ store, model, tools, maxTurns: 5 });
    expect(done).toMatchObject({ status: 'done', text: 'three turns', turn: 3, maxTurns: 5 });
    expect(model.calls).toBe(4);
    expect([counter.of('c1'), counter.of('c2'), counter.of('c3')]).toEqual([1, 1, 1]);
  });

  it('lets a run use exactly MAX_TURNS tool turns and still finish', async () => {
    const { tools } = countingTools();
    const result = await startRun({ store: newStore(), model: scriptedModel(threeTurns()), tools, task: 't', maxTurns: 3 });
    expect(result.status).toBe('done');
  });
});

describe('a failed ledger write', () => {
  it('returns the real result to the model, alerts, and B carries the result', async () => {
    const { tools, counter } = countingTools();
    const store = newStore({ writeFaults: 'effect-write:1' });
    const { events, observer } = collect();
    const result = await startRun({
      store,
      model: scriptedModel([toolUseReply([{ id: 'c1', name: 'send_email', input: { to: 'q' } }]), endTurnReply('ok')]),
      tools,
      task: 't',
      observer,
    });
    expect(result.status).toBe('done');
    const alert = events.find((e) => e.type === 'ledger-write-failed');
    expect(alert).toMatchObject({ call: { id: 'c1', name: 'send_email' } });
    const view = foldJournal(store.location, await store.load());
    expect(view.ledger.has('c1')).toBe(false);
    expect(toolResultOf(view.context.messages, 'c1')).toEqual({ type: 'tool_result', tool_use_id: 'c1', content: 'sent to q' });
    expect(counter.of('c1')).toBe(1);
  });

  it('a failed checkpoint A stops the run before the tool starts; the resume asks the model again', async () => {
    const { tools, counter } = countingTools();
    const store = newStore({ writeFaults: 'save-a:1' });
    const steps = (): ScriptedStep[] => [toolUseReply([{ id: 'c1', name: 'send_email', input: { to: 'q' } }]), endTurnReply('ok')];
    await expect(startRun({ store, model: scriptedModel(steps()), tools, task: 't' })).rejects.toThrow(StoreWriteError);
    expect(counter.of('c1')).toBe(0);
    const result = await resumeRun({ store: new FileStore(store.dir), model: scriptedModel(steps()), tools });
    expect(result.status).toBe('done');
    expect(counter.of('c1')).toBe(1);
  });
});

describe('starting where a run exists', () => {
  it('refuses to start over an unfinished run; fresh archives it', async () => {
    const { tools } = countingTools();
    const store = newStore();
    const steps = (): ScriptedStep[] => [toolUseReply([{ id: 'c1', name: 'lookup', input: { q: 'a' } }]), endTurnReply('ok')];
    await expect(startRun({ store, model: scriptedModel(steps()), tools, task: 't', crashAfter: 'after-save-a:1' })).rejects.toThrow(SimulatedCrash);
    const refused = await startRun({ store, model: scriptedModel(steps()), tools, task: 't' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RunExistsError);
    expect((refused as Error).message).toContain('state pendingTool, turn 1');
    const fresh = await startRun({ store, model: scriptedModel(steps()), tools, task: 't', fresh: true });
    expect(fresh.status).toBe('done');
  });
});

describe('the programmatic API', () => {
  it('runs user tools and a user model through start, crash, status and resume', async () => {
    const parts = (): Omit<RunParts, 'store'> => ({
      model: scriptedModel([toolUseReply([{ id: 'c1', name: 'lookup', input: { q: 'api' } }]), endTurnReply('answered')]),
      tools: countingTools().tools,
    });
    const store = newStore();
    await expect(startRun({ ...parts(), store, task: 'use the api', crashAfter: 'after-save-b:1' })).rejects.toThrow(SimulatedCrash);
    expect(await readRunStatus(store)).toMatchObject({ state: 'closed', turn: 1, task: 'use the api' });
    expect(await resumeRun({ ...parts(), store })).toMatchObject({ status: 'done', text: 'answered' });
  });
});
