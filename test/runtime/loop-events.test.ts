/**
 * What the in-memory loop's cheaper paths must keep: each record's `saved` event carries the
 * same fields, the open calls as views with their tool's traits (one view per call, reused from
 * record to record), and a turn of a single call follows the scheduler's rule like any other.
 */
import { describe, expect, it } from 'vitest';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { type Finished, type Job, runInOrder } from '../../src/runtime/tool-scheduler.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { defineTool } from '../../src/tools/tool.ts';

const schema = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
const look = defineTool<{ q: string }>({ name: 'look', description: 'reads', inputSchema: schema, readOnly: true, run: ({ q }) => `saw ${q}` });
const note = defineTool<{ q: string }>({ name: 'note', description: 'writes', inputSchema: schema, readOnly: false, run: ({ q }) => `noted ${q}` });

const SAVED_FIELDS = ['type', 'point', 'label', 'seq', 'state', 'event', 'turn', 'maxTurns', 'pending', 'recordedIds', 'ledgerEntries', 'usage', 'bytes', 'at', 'durable', 'closesResumedTurn', 'syncMs'];

describe('saved events of the in-memory loop', () => {
  it('carry the same fields on every record, the open calls with their traits, and what is recorded so far', async () => {
    const saved: Extract<RunEvent, { type: 'saved' }>[] = [];
    const result = await startRun({
      store: new MemoryStore('events'),
      model: scriptedModel([
        toolUseReply([
          { id: 'r1', name: 'look', input: { q: 'a' } },
          { id: 'w1', name: 'note', input: { q: 'b' } },
          { id: 'u1', name: 'nope', input: { q: 'c' } },
        ]),
        toolUseReply([{ id: 'r2', name: 'look', input: { q: 'd' } }]),
        endTurnReply('done'),
      ]),
      tools: [look, note],
      task: 'look, then note',
      maxTurns: 5,
      observer: (event) => void (event.type === 'saved' && saved.push(event)),
    });
    expect(result.status).toBe('done');
    for (const event of saved) expect(Object.keys(event)).toEqual(SAVED_FIELDS);
    expect(saved.map((event) => event.seq)).toEqual(saved.map((_, index) => index));

    const views = [
      { id: 'r1', name: 'look', input: { q: 'a' }, readOnly: true },
      { id: 'w1', name: 'note', input: { q: 'b' }, readOnly: false },
      { id: 'u1', name: 'nope', input: { q: 'c' }, readOnly: null },
    ];
    const view2 = [{ id: 'r2', name: 'look', input: { q: 'd' }, readOnly: true }];
    const summary = saved.map(({ event, state, turn, pending, recordedIds, ledgerEntries, durable }) => ({ event, state, turn, pending, recordedIds, ledgerEntries, durable }));
    const atTurn1 = summary.filter((entry) => entry.turn === 1 && entry.state !== 'closed');
    expect(atTurn1).toEqual([
      { event: 'MODEL_REPLY', state: 'pendingTool', turn: 1, pending: views, recordedIds: [], ledgerEntries: 0, durable: true },
      // A read-only call first, the call with a side effect alone, then the unknown tool (rejected, never run).
      { event: 'TOOL_RESULT', state: 'effectRecorded', turn: 1, pending: views, recordedIds: ['r1'], ledgerEntries: 1, durable: true },
      { event: 'TOOL_RESULT', state: 'effectRecorded', turn: 1, pending: views, recordedIds: ['r1', 'w1'], ledgerEntries: 2, durable: true },
      { event: 'TOOL_RESULT', state: 'effectRecorded', turn: 1, pending: views, recordedIds: ['r1', 'w1', 'u1'], ledgerEntries: 3, durable: false },
    ]);
    const atTurn2 = summary.filter((entry) => entry.turn === 2 && (entry.state === 'pendingTool' || entry.state === 'effectRecorded'));
    expect(atTurn2).toEqual([
      { event: 'MODEL_REPLY', state: 'pendingTool', turn: 2, pending: view2, recordedIds: [], ledgerEntries: expect.any(Number), durable: true },
      { event: 'TOOL_RESULT', state: 'effectRecorded', turn: 2, pending: view2, recordedIds: ['r2'], ledgerEntries: expect.any(Number), durable: false },
    ]);
    const closes = summary.filter((entry) => entry.event === 'CLOSE_TURN');
    expect(closes.map(({ state, turn, pending, recordedIds }) => ({ state, turn, pending, recordedIds }))).toEqual([
      { state: 'closed', turn: 1, pending: [], recordedIds: [] },
      { state: 'closed', turn: 2, pending: [], recordedIds: [] },
    ]);
    expect(saved.at(-1)).toMatchObject({ event: 'MODEL_REPLY', state: 'done', pending: [], point: 'save-done' });
  });
});

describe('a turn of a single call', () => {
  const call = { id: 'c1', name: 'look', input: { q: 'a' } };
  const outcome = { tool_use_id: 'c1', name: 'look', kind: 'ran' as const, content: 'saw a', is_error: false };
  const job = (finish: () => Promise<Finished | null>, overlaps = true): Job & { started: () => boolean } => {
    let started = false;
    return { call, overlaps, finish: () => ((started = true), finish()), started: () => started };
  };

  it('records its outcome alone, with nothing else in flight, and returns the effect the record announced', async () => {
    for (const overlaps of [true, false]) {
      const groups: Array<{ group: readonly Finished[]; othersRunning: boolean }> = [];
      const one = job(async () => ({ call, outcome }), overlaps);
      const effect = await runInOrder([one], { limit: 4, record: async (group, othersRunning) => (groups.push({ group, othersRunning }), 'requestTurnClose') }, 'runPendingTools');
      expect(effect).toBe('requestTurnClose');
      expect(groups).toEqual([{ group: [{ call, outcome }], othersRunning: false }]);
    }
  });

  it('starts nothing when a stop was asked or the run is stopping, and waits for a decision instead when one is needed', async () => {
    const record = async () => 'requestTurnClose' as const;
    const asked = job(async () => ({ call, outcome }));
    expect(await runInOrder([asked], { limit: 4, record, stopAsked: async () => true }, 'runPendingTools')).toBe('runPendingTools');
    expect(asked.started()).toBe(false);
    const stopping = job(async () => ({ call, outcome }));
    expect(await runInOrder([stopping], { limit: 4, record, signal: AbortSignal.abort() }, 'runPendingTools')).toBe('runPendingTools');
    expect(stopping.started()).toBe(false);
    const undecided = job(async () => ({ call, outcome }), false);
    expect(await runInOrder([undecided], { limit: 4, record, instead: () => Promise.resolve('awaitDecision' as const) }, 'runPendingTools')).toBe('awaitDecision');
    expect(undecided.started()).toBe(false);
  });

  it('records nothing for a job with nothing to record, and a failed record fails the turn', async () => {
    let recorded = 0;
    const record = async () => ((recorded += 1), 'requestTurnClose' as const);
    expect(await runInOrder([job(async () => null)], { limit: 4, record }, 'runPendingTools')).toBe('runPendingTools');
    expect(recorded).toBe(0);
    const lost = new Error('the disk is gone');
    await expect(runInOrder([job(async () => ({ call, outcome }))], { limit: 4, record: async () => Promise.reject(lost) }, 'runPendingTools')).rejects.toBe(lost);
    const thrown = new Error('the tool broke the runtime');
    await expect(runInOrder([job(async () => Promise.reject(thrown))], { limit: 4, record }, 'runPendingTools')).rejects.toBe(thrown);
  });
});
