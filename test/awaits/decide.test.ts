/**
 * decide() and pendingDecisions() on a real FileStore with its file inbox: two calls of one turn
 * wait, both can be decided (the later one before the awaited one), each refusal has its reason
 * and writes nothing, and the run takes the decisions up once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decide, pendingDecisions } from '../../src/awaits/decide.ts';
import { DecisionRefusedError } from '../../src/awaits/decision-errors.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { StoreMissingError } from '../../src/store/errors.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const script = () => [
  toolUseReply([
    { id: 'toolu_a', name: 'lookup', input: { q: 'a' } },
    { id: 'toolu_b', name: 'send_email', input: { to: 'x@example.com' } },
    { id: 'toolu_c', name: 'send_email', input: { to: 'y@example.com' } },
  ]),
  endTurnReply('done'),
];

async function waitingRun() {
  const dir = tempDir();
  const store = new FileStore(path.join(dir, '.durable-agent'));
  const { tools, counter } = countingTools();
  const parts = { store, tools, requireApproval: ['send_email'], wait: false };
  const result = await startRun({ ...parts, model: scriptedModel(script()), task: 'mail' });
  expect(result.status).toBe('waiting');
  const resume = () => resumeRun({ ...parts, store: new FileStore(store.dir), model: scriptedModel(script()) });
  return { dir, store, tools, counter, resume };
}

async function refusal(promise: Promise<unknown>): Promise<DecisionRefusedError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(DecisionRefusedError);
  return error as DecisionRefusedError;
}

describe('pendingDecisions and decide', () => {
  it('lists the two waiting calls of the turn, the awaited one with since when; both can be decided, the later one first', async () => {
    const { store, counter, resume, tools } = await waitingRun();
    const waiting = await pendingDecisions(store);
    expect(waiting.map(({ tool_use_id, needs, awaited, given }) => ({ tool_use_id, needs, awaited, given }))).toEqual([
      { tool_use_id: 'toolu_b', needs: 'approval', awaited: true, given: null },
      { tool_use_id: 'toolu_c', needs: 'approval', awaited: false, given: null },
    ]);
    expect(waiting[0]!.since).toEqual(expect.any(Number));
    expect(waiting[1]!.since).toBeNull();

    const denied = await decide(store, { tool_use_id: 'toolu_c', verdict: 'denied', reason: 'not y', by: 'ana' }, { now: () => 42 });
    expect(denied).toEqual({ tool_use_id: 'toolu_c', verdict: 'denied', reason: 'not y', by: 'ana', at: 42 });
    await decide(store, { tool_use_id: 'toolu_b', verdict: 'approved', input: { to: 'z@example.com' } }, { tools });
    expect((await pendingDecisions(store)).map((call) => [call.tool_use_id, call.given?.verdict, call.given?.by])).toEqual([
      ['toolu_b', 'approved', 'api'],
      ['toolu_c', 'denied', 'ana'],
    ]);

    expect((await resume()).status).toBe('done');
    expect(counter.of('toolu_b')).toBe(1);
    expect(counter.of('toolu_c')).toBe(0);
    expect(await pendingDecisions(store)).toEqual([]);
    expect(fs.readdirSync(store.decisions.dir)).toEqual([]);
  });

  it('refuses, with its reason and nothing written: no run, no such call, not waiting, a second decision, a wrong verdict, invalid input', async () => {
    const { store, tools, resume } = await waitingRun();
    const empty = new FileStore(path.join(tempDir(), '.durable-agent'));
    expect((await refusal(decide(empty, { tool_use_id: 'toolu_b', verdict: 'approved' }))).reason).toBe('no-run');
    await expect(pendingDecisions(empty)).rejects.toBeInstanceOf(StoreMissingError);
    expect((await refusal(decide(store, { tool_use_id: 'toolu_zz', verdict: 'approved' }))).reason).toBe('no-such-call');
    expect((await refusal(decide(store, { tool_use_id: '../toolu_b', verdict: 'approved' }))).reason).toBe('no-such-call');
    const notFlagged = await refusal(decide(store, { tool_use_id: 'toolu_a', verdict: 'approved' }));
    expect([notFlagged.reason, notFlagged.tool_use_id]).toEqual(['not-waiting', 'toolu_a']);
    expect(notFlagged.message).toContain('pending` lists the calls that wait');
    expect((await refusal(decide(store, { tool_use_id: 'toolu_b', verdict: 'answered', text: 'hi' }))).reason).toBe('wrong-verdict');
    expect((await refusal(decide(store, { tool_use_id: 'toolu_b', verdict: 'denied', reason: ' ' }))).reason).toBe('wrong-verdict');
    expect((await refusal(decide(store, { tool_use_id: 'toolu_b', verdict: 'denied', reason: 'x', input: {} }))).reason).toBe('wrong-verdict');
    const invalid = await refusal(decide(store, { tool_use_id: 'toolu_b', verdict: 'approved', input: { to: 5 } }, { tools }));
    expect([invalid.reason, invalid.message]).toEqual(['invalid-input', expect.stringContaining('/to must be string')]);
    const unknownSchema = await refusal(decide(store, { tool_use_id: 'toolu_b', verdict: 'approved', input: { to: 'z' } }));
    expect([unknownSchema.reason, unknownSchema.message]).toEqual(['invalid-input', expect.stringContaining('is not known here')]);
    const otherSchema = tools.map((tool) => (tool.name === 'send_email' ? { ...tool, inputSchema: { type: 'object' } } : tool));
    expect((await refusal(decide(store, { tool_use_id: 'toolu_b', verdict: 'approved', input: { to: 'z' } }, { tools: otherSchema }))).reason).toBe('invalid-input');
    expect(fs.existsSync(store.decisions.dir) ? fs.readdirSync(store.decisions.dir) : []).toEqual([]);

    await decide(store, { tool_use_id: 'toolu_b', verdict: 'approved' });
    expect((await refusal(decide(store, { tool_use_id: 'toolu_b', verdict: 'denied', reason: 'late' }))).reason).toBe('already-decided');
    await decide(store, { tool_use_id: 'toolu_c', verdict: 'approved' });
    await resume();
    const finished = await refusal(decide(store, { tool_use_id: 'toolu_b', verdict: 'approved' }));
    expect([finished.reason, finished.message]).toEqual(['not-waiting', expect.stringContaining('its turn is over')]);
  });

  it('refuses a decision for a call the run already decided, though its inbox file is gone', async () => {
    const { store } = await waitingRun();
    const parts = { store: new FileStore(store.dir), tools: countingTools().tools, requireApproval: ['send_email'], wait: false };
    await decide(store, { tool_use_id: 'toolu_b', verdict: 'approved' });
    // The run takes toolu_b up and stops again at toolu_c: toolu_b is decided in the journal.
    expect((await resumeRun({ ...parts, model: scriptedModel(script()) })).status).toBe('waiting');
    expect(fs.readdirSync(store.decisions.dir)).toEqual([]);
    const again = await refusal(decide(store, { tool_use_id: 'toolu_b', verdict: 'denied', reason: 'changed my mind' }));
    expect([again.reason, again.message]).toEqual(['already-decided', expect.stringMatching(/^toolu_b \(send_email\) was already approved by api at .*; a call is decided once\./)]);
  });

  it('a run cancelled while its calls waited takes no decision for them: refused, nothing written', async () => {
    const { store } = await waitingRun();
    const { cancelRun } = await import('../../src/runtime/cancel-run.ts');
    expect((await cancelRun({ store, by: 'ops' })).outcome).toBe('cancelled');
    const ended = await refusal(decide(store, { tool_use_id: 'toolu_b', verdict: 'approved' }));
    expect([ended.reason, ended.message]).toEqual(['not-waiting', expect.stringContaining('has ended (cancelled): toolu_b waits for nothing any more')]);
    expect(await store.decisions!.read()).toEqual([]);
    expect(await pendingDecisions(store)).toEqual([]);
  });
});
