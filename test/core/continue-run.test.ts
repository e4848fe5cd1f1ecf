/**
 * Continuing a finished conversation (resumeRun({ message })), on both stores: the message is
 * durable in the REOPEN record before the model is asked, so a crash after it or during the
 * model call resumes asking once, with the message once. Refusals write nothing.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Message, ModelReply } from '../../machines/agent-loop.types.ts';
import type { Model, ModelRequest } from '../../src/model/model.ts';
import { endTurnReply, scriptedModel, type ScriptedStep, stopReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { ContinueRefusedError } from '../../src/core/continue-run.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { readRunHistory, readRunStatus } from '../../src/runtime/run-status.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import type { RunStore } from '../../src/store/store.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const STORES: Array<[string, () => RunStore]> = [
  ['MemoryStore', () => new MemoryStore()],
  ['FileStore', () => new FileStore(path.join(tempDir(), '.durable-agent'))],
];

/** A scripted model that keeps every request it received (a copy of its messages). */
function recordingModel(steps: ScriptedStep[], options: { afterScript?: ScriptedStep; failOn?: number } = {}) {
  const inner = scriptedModel(steps, options.afterScript ? { afterScript: options.afterScript } : {});
  const requests: Message[][] = [];
  const model: Model = {
    name: 'recording-scripted',
    async createMessage(request: ModelRequest): Promise<ModelReply> {
      requests.push(structuredClone(request.messages) as Message[]);
      // The process dies while the model is being asked: nothing of the reply arrives.
      if (options.failOn === requests.length) throw new SimulatedCrash('during the model call');
      return inner.createMessage(request);
    },
  };
  return { model, requests };
}

const occurrences = (messages: readonly Message[], text: string) => messages.filter((m) => m.role === 'user' && m.content === text).length;

async function recordsOf(store: RunStore): Promise<number> {
  return (await store.load()).records.length;
}

async function messagesOf(store: RunStore): Promise<Message[]> {
  return foldJournal(store.location, await store.load()).context.messages;
}

/** Answers whatever the user said last, so each continuation has its own reply. */
const echo: ScriptedStep = (messages) => endTurnReply(`re: ${String(messages[messages.length - 1]!.content)}`);

describe.each(STORES)('continue a finished conversation (%s)', (_name, newStore) => {
  it('once: the model gets the whole conversation plus the message; status and history say so', async () => {
    const store = newStore();
    const { tools } = countingTools();
    const { model, requests } = recordingModel([toolUseReply([{ id: 't1', name: 'lookup', input: { q: 'a' } }]), endTurnReply('first answer')], { afterScript: echo });
    const first = await startRun({ store, model, tools, task: 'the task', maxTurns: 5 });
    expect(first.status).toBe('done');
    expect(requests).toHaveLength(2);

    const before = Date.now();
    const continued = await resumeRun({ store, model, tools, message: 'and now the summary?' });
    expect(continued).toMatchObject({ status: 'done', text: 're: and now the summary?', turn: 1, maxTurns: 5 });
    expect(requests).toHaveLength(3);
    const asked = requests[2]!;
    expect(asked.slice(0, -1)).toEqual(requests[1]!.concat([{ role: 'assistant', content: [{ type: 'text', text: 'first answer' }] }]));
    expect(asked[asked.length - 1]).toEqual({ role: 'user', content: 'and now the summary?' });

    const status = await readRunStatus(store);
    expect(status.state).toBe('done');
    expect(status.finalText).toBe('re: and now the summary?');
    expect(status.continued).toHaveLength(1);
    expect(status.continued[0]).toMatchObject({ turn: 1, message: 'and now the summary?' });
    expect(status.continued[0]!.at).toBeGreaterThanOrEqual(before);
    const history = await readRunHistory(store);
    const reopen = history.filter((step) => step.continued);
    expect(reopen).toHaveLength(1);
    expect(reopen[0]).toMatchObject({ event: 'REOPEN', state: 'awaitingModel', continued: { message: 'and now the summary?' }, note: { continued: { turn: 1 } } });
  });

  it('twice: each message once, in order, each answered', async () => {
    const store = newStore();
    const { model, requests } = recordingModel([endTurnReply('one')], { afterScript: echo });
    await startRun({ store, model, tools: [], task: 'start' });
    expect((await resumeRun({ store, model, tools: [], message: 'second' })).text).toBe('re: second');
    expect((await resumeRun({ store, model, tools: [], message: 'third' })).text).toBe('re: third');
    expect(requests).toHaveLength(3);
    expect(requests[2]!.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    const messages = await messagesOf(store);
    expect(occurrences(messages, 'second')).toBe(1);
    expect(occurrences(messages, 'third')).toBe(1);
    expect((await readRunStatus(store)).continued.map((step) => step.message)).toEqual(['second', 'third']);
    // A plain resume of the done run changes nothing and asks nothing.
    const records = await recordsOf(store);
    expect((await resumeRun({ store, model, tools: [] })).status).toBe('done');
    expect(await recordsOf(store)).toBe(records);
    expect(requests).toHaveLength(3);
  });

  it('a crash right after the message record: the resume asks once, with the message once', async () => {
    const store = newStore();
    const { model, requests } = recordingModel([endTurnReply('one')], { afterScript: echo });
    await startRun({ store, model, tools: [], task: 'start' });
    await expect(resumeRun({ store, model, tools: [], message: 'follow-up', crashAfter: 'after-save-reopen:1' })).rejects.toThrow(SimulatedCrash);
    expect(requests).toHaveLength(1);
    expect(occurrences(await messagesOf(store), 'follow-up')).toBe(1);
    expect((await readRunStatus(store)).state).toBe('awaitingModel');

    // Giving the message again would repeat it: refused, nothing written.
    const records = await recordsOf(store);
    await expect(resumeRun({ store, model, tools: [], message: 'follow-up' })).rejects.toThrow(ContinueRefusedError);
    expect(await recordsOf(store)).toBe(records);

    const resumed = await resumeRun({ store, model, tools: [] });
    expect(resumed).toMatchObject({ status: 'done', text: 're: follow-up' });
    expect(requests).toHaveLength(2);
    expect(occurrences(requests[1]!, 'follow-up')).toBe(1);
    expect(occurrences(await messagesOf(store), 'follow-up')).toBe(1);
  });

  it('a crash during the model call: the resume asks again, once, with the message once', async () => {
    const store = newStore();
    const { model, requests } = recordingModel([endTurnReply('one')], { afterScript: echo, failOn: 2 });
    await startRun({ store, model, tools: [], task: 'start' });
    await expect(resumeRun({ store, model, tools: [], message: 'follow-up' })).rejects.toThrow(SimulatedCrash);
    expect(requests).toHaveLength(2);
    expect(occurrences(requests[1]!, 'follow-up')).toBe(1);

    const resumed = await resumeRun({ store, model, tools: [] });
    expect(resumed).toMatchObject({ status: 'done', text: 're: follow-up' });
    expect(requests).toHaveLength(3);
    expect(requests[2]).toEqual(requests[1]);
    expect(occurrences(await messagesOf(store), 'follow-up')).toBe(1);
  });

  it('the turn limit stays the run’s total: a continued run uses the turns left, or the larger total given', async () => {
    const store = newStore();
    const { tools } = countingTools();
    const toolTurn = (id: string): ScriptedStep => () => toolUseReply([{ id, name: 'lookup', input: { q: id } }]);
    // Turn 1 in the first conversation; the continuation wants two more tool turns.
    const steps: ScriptedStep[] = [toolTurn('a1'), endTurnReply('one'), toolTurn('b1'), toolTurn('b2'), endTurnReply('two')];
    const { model } = recordingModel(steps);
    await startRun({ store, model, tools, task: 'start', maxTurns: 2 });
    const stopped = await resumeRun({ store, model, tools, message: 'more' });
    expect(stopped).toMatchObject({ status: 'stoppedAtMaxTurns', turn: 2, maxTurns: 2 });
    // Stopped at the limit, it goes on as any such run does: a resume with more turns.
    expect(await resumeRun({ store, model, tools, maxTurns: 3 })).toMatchObject({ status: 'done', text: 'two', turn: 3 });

    // No turn left: a message needs a larger total, given with it.
    const records = await recordsOf(store);
    const refusal = await resumeRun({ store, model, tools, message: 'again' }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ContinueRefusedError);
    expect((refusal as ContinueRefusedError).problem).toBe('no-turns-left');
    expect((refusal as Error).message).toContain('--max-turns');
    expect(await recordsOf(store)).toBe(records);
    const { model: next } = recordingModel([], { afterScript: echo });
    expect(await resumeRun({ store, model: next, tools, message: 'again', maxTurns: 4 })).toMatchObject({ status: 'done', text: 're: again', maxTurns: 4 });
  });
});

describe.each(STORES)('a message the run cannot take is refused, nothing written (%s)', (_name, newStore) => {
  async function refused(store: RunStore, model: Model, problem: string, extra: { maxTurns?: number } = {}) {
    const records = await recordsOf(store);
    const error = await resumeRun({ store, model, tools: countingTools().tools, message: 'go on', ...extra }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContinueRefusedError);
    expect((error as ContinueRefusedError).problem).toBe(problem);
    expect(await recordsOf(store)).toBe(records);
    return error as ContinueRefusedError;
  }

  it('an unfinished run (crashed mid-turn)', async () => {
    const store = newStore();
    const { tools } = countingTools();
    const model = scriptedModel([toolUseReply([{ id: 't1', name: 'lookup', input: {} }]), endTurnReply('x')]);
    await expect(startRun({ store, model, tools, task: 't', crashAfter: 'after-save-a:1' })).rejects.toThrow(SimulatedCrash);
    const error = await refused(store, model, 'not-done');
    expect(error.message).toContain('not done');
    expect(error.message).toContain('without --message');
  });

  it('a failed run, a run stopped at max turns, a run waiting for a person', async () => {
    const failed = newStore();
    const model = scriptedModel([stopReply('max_tokens', 'cut')]);
    expect((await startRun({ store: failed, model, tools: [], task: 't' })).status).toBe('failed');
    await refused(failed, model, 'not-done');

    const stopped = newStore();
    const { tools } = countingTools();
    const atLimit = scriptedModel([toolUseReply([{ id: 't1', name: 'lookup', input: {} }]), toolUseReply([{ id: 't2', name: 'lookup', input: {} }])]);
    expect((await startRun({ store: stopped, model: atLimit, tools, task: 't', maxTurns: 1 })).status).toBe('stoppedAtMaxTurns');
    expect((await refused(stopped, atLimit, 'not-done', { maxTurns: 5 })).message).toContain('stopped at its MAX_TURNS');

    const waiting = newStore();
    const asks = scriptedModel([toolUseReply([{ id: 't1', name: 'send_email', input: {} }])]);
    expect((await startRun({ store: waiting, model: asks, tools, task: 't', requireApproval: ['send_email'], wait: false })).status).toBe('waiting');
    expect((await refused(waiting, asks, 'not-done')).message).toContain('waiting for a person');
  });

  it('an empty message, before the run is read', async () => {
    const store = newStore();
    const model = scriptedModel([endTurnReply('x')]);
    await startRun({ store, model, tools: [], task: 't' });
    const records = await recordsOf(store);
    for (const message of ['', '   \n']) {
      const error = await resumeRun({ store, model, tools: [], message }).catch((e: unknown) => e);
      expect((error as ContinueRefusedError).problem).toBe('empty');
    }
    expect(await recordsOf(store)).toBe(records);
  });
});
