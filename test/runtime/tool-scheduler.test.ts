/**
 * Parallel calls of one reply, in-process on a real file store: read-only calls run side by
 * side up to toolConcurrency, every other call runs alone in the model's order, outcomes are
 * recorded in the order the calls finish, and the model gets its results in its own order.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Message, ModelReply } from '../../machines/agent-loop.types.ts';
import type { Model, ModelRequest } from '../../src/model/model.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { RunStoppedError } from '../../src/core/stop-errors.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { ToolConcurrencyError } from '../../src/runtime/tool-scheduler.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { ledgerEntriesOf } from '../../src/store/journal/journal-codec.ts';
import { defineTool, type ToolDefinition } from '../../src/tools/tool.ts';
import { FinishOrder } from '../helpers/finish-order.ts';
import { toolUseProblems } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const newStore = () => new FileStore(path.join(tempDir(), '.durable-agent'));

/** What the tools saw: starts and ends in order, and the most calls in flight at once. */
class Timeline {
  readonly log: string[] = [];
  inFlight = 0;
  maxInFlight = 0;
  started(id: string): void {
    this.log.push(`start ${id}`);
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
  }
  ended(id: string): void {
    this.log.push(`end ${id}`);
    this.inFlight -= 1;
  }
}

interface ToolKit {
  timeline: Timeline;
  runs: Map<string, number>;
  /** Resolved before a call returns (default: at once). */
  hold: (id: string) => Promise<void>;
}

function kit(hold: ToolKit['hold'] = () => Promise.resolve()): ToolKit {
  return { timeline: new Timeline(), runs: new Map(), hold };
}

function tool(k: ToolKit, name: string, traits: Pick<ToolDefinition, 'readOnly' | 'concurrencySafe'>): ToolDefinition {
  return defineTool<{ q: string }>({
    name,
    description: name,
    inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    ...traits,
    run: async ({ q }, ctx) => {
      k.runs.set(ctx.toolUseId, (k.runs.get(ctx.toolUseId) ?? 0) + 1);
      k.timeline.started(ctx.toolUseId);
      await k.hold(ctx.toolUseId);
      k.timeline.ended(ctx.toolUseId);
      return `${name} ${q}`;
    },
  });
}

const tools = (k: ToolKit) => [
  tool(k, 'lookup', { readOnly: true }),
  tool(k, 'send_email', { readOnly: false }),
  tool(k, 'append_log', { readOnly: false, concurrencySafe: true }),
];

const calls = (...specs: Array<[string, string]>) => toolUseReply(specs.map(([id, name]) => ({ id, name, input: { q: id } })));

function recordingModel(steps: ModelReply[]): Model & { requests: ModelRequest[] } {
  const inner = scriptedModel(steps);
  const requests: ModelRequest[] = [];
  return { name: 'recording', requests, createMessage: (request) => (requests.push(request), inner.createMessage(request)) };
}

/** The tool_use_ids of the journal's TOOL_RESULT records, in the order they were written. */
async function recordOrder(store: FileStore): Promise<string[]> {
  const loaded = await store.load();
  return loaded.records.filter((r) => r.record.event === 'TOOL_RESULT').flatMap((r) => ledgerEntriesOf(r.record).map((entry) => entry.tool_use_id));
}

async function messagesOf(store: FileStore): Promise<Message[]> {
  return foldJournal(store.location, await store.load()).context.messages;
}

describe('read-only calls of one reply run side by side', () => {
  it('never more than toolConcurrency at once (2, and the default 4)', async () => {
    for (const [concurrency, expected] of [[2, 2], [undefined, 4]] as const) {
      // Each call returns only once as many calls as allowed are in flight (or all have started):
      // a scheduler that started more at once would show a higher maximum.
      let started = 0;
      const k: ToolKit = kit(async () => {
        started += 1;
        while (k.timeline.inFlight < expected && started < 6) await new Promise((r) => setTimeout(r, 2));
      });
      const reply = calls(['a', 'lookup'], ['b', 'lookup'], ['c', 'lookup'], ['d', 'lookup'], ['e', 'lookup'], ['f', 'lookup']);
      const result = await startRun({ store: newStore(), model: scriptedModel([reply, endTurnReply('ok')]), tools: tools(k), task: 't', ...(concurrency ? { toolConcurrency: concurrency } : {}) });
      expect(result.status).toBe('done');
      expect(k.timeline.maxInFlight, `toolConcurrency ${concurrency ?? 'default'}`).toBe(expected);
      expect([...k.runs.values()]).toEqual([1, 1, 1, 1, 1, 1]);
    }
  });

  it('toolConcurrency 1 runs every call after the one before it', async () => {
    const k = kit(() => new Promise((r) => setTimeout(r, 5)));
    await startRun({ store: newStore(), model: scriptedModel([calls(['a', 'lookup'], ['b', 'lookup'], ['c', 'lookup']), endTurnReply('ok')]), tools: tools(k), task: 't', toolConcurrency: 1 });
    expect(k.timeline.log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it('records each outcome as its call finishes, and sends the results back in the model’s order', async () => {
    const order = new FinishOrder(['c', 'a', 'b']);
    const k = kit((id) => order.turnOf(id));
    const store = newStore();
    const model = recordingModel([calls(['a', 'lookup'], ['b', 'lookup'], ['c', 'lookup']), endTurnReply('ok')]);
    const result = await startRun({ store, model, tools: tools(k), task: 't', observer: order.observe });
    expect(result.status).toBe('done');
    // All three were in flight before any returned.
    expect(k.timeline.log.slice(0, 3).sort()).toEqual(['start a', 'start b', 'start c']);
    expect(await recordOrder(store)).toEqual(['c', 'a', 'b']);
    const results = model.requests[1]!.messages.at(-1)!;
    expect(results).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'a', content: 'lookup a' },
        { type: 'tool_result', tool_use_id: 'b', content: 'lookup b' },
        { type: 'tool_result', tool_use_id: 'c', content: 'lookup c' },
      ],
    });
    expect(toolUseProblems(await messagesOf(store))).toEqual([]);
  });

  it('a side-effecting call waits for every call before it and holds back every call after it', async () => {
    const k = kit(() => new Promise((r) => setTimeout(r, 5)));
    const store = newStore();
    const reply = calls(['r1', 'lookup'], ['r2', 'lookup'], ['s1', 'send_email'], ['r3', 'lookup'], ['r4', 'lookup'], ['s2', 'send_email'], ['r5', 'lookup']);
    const recordedWhenStarted = new Map<string, string[]>();
    const observer = (event: RunEvent) => {
      if (event.type === 'tool-started') recordedWhenStarted.set(event.call.id, [...recorded]);
      if (event.type === 'saved') recorded = event.recordedIds;
    };
    let recorded: string[] = [];
    const result = await startRun({ store, model: scriptedModel([reply, endTurnReply('ok')]), tools: tools(k), task: 't', observer });
    expect(result.status).toBe('done');
    const log = k.timeline.log;
    const at = (entry: string) => log.indexOf(entry);
    // s1 starts after r1 and r2 have ended and been recorded, and nothing starts until s1 has ended.
    expect(at('start s1')).toBeGreaterThan(Math.max(at('end r1'), at('end r2')));
    expect(recordedWhenStarted.get('s1')!.sort()).toEqual(['r1', 'r2']);
    expect(log[at('start s1') + 1]).toBe('end s1');
    expect(recordedWhenStarted.get('r3')).toContain('s1');
    expect(recordedWhenStarted.get('s2')!.sort()).toEqual(['r1', 'r2', 'r3', 'r4', 's1']);
    expect(log[at('start s2') + 1]).toBe('end s2');
    expect(recordedWhenStarted.get('r5')).toContain('s2');
    // r3 and r4 ran side by side.
    expect(at('start r4')).toBeLessThan(at('end r3'));
    expect(await recordOrder(store)).toEqual(expect.arrayContaining(['r1', 'r2', 's1', 'r3', 'r4', 's2', 'r5']));
    const order = await recordOrder(store);
    expect(order.indexOf('s1')).toBe(2);
    expect(order.indexOf('s2')).toBe(5);
  });

  it('a tool marked concurrencySafe runs beside read-only calls', async () => {
    const order = new FinishOrder(['w', 'r']);
    const k = kit((id) => order.turnOf(id));
    await startRun({ store: newStore(), model: scriptedModel([calls(['r', 'lookup'], ['w', 'append_log']), endTurnReply('ok')]), tools: tools(k), task: 't', observer: order.observe });
    expect(k.timeline.log).toEqual(['start r', 'start w', 'end w', 'end r']);
  });

  it('a call that needs approval waits, with nothing in flight, after the calls before it; those after it start once it is recorded', async () => {
    const k = kit(() => new Promise((r) => setTimeout(r, 5)));
    const store = newStore();
    const reply = calls(['r1', 'lookup'], ['r2', 'lookup'], ['p', 'send_email'], ['r3', 'lookup']);
    const events: RunEvent[] = [];
    const result = await startRun({
      store,
      model: scriptedModel([reply, endTurnReply('ok')]),
      tools: tools(k),
      task: 't',
      requireApproval: ['send_email'],
      onDecision: () => ({ verdict: 'approved' }),
      observer: (e) => events.push(e),
    });
    expect(result.status).toBe('done');
    const steps = events.flatMap((e) => (e.type === 'saved' && e.event !== 'MODEL_USAGE' ? [`${e.event}`] : e.type === 'tool-started' ? [`start ${e.call.id}`] : []));
    const waitAt = steps.indexOf('DECISION_NEEDED');
    expect(steps.slice(0, waitAt).filter((s) => s === 'TOOL_RESULT')).toHaveLength(2);
    expect(steps.slice(waitAt)).toEqual(['DECISION_NEEDED', 'DECISION', 'start p', 'TOOL_RESULT', 'start r3', 'TOOL_RESULT', 'CLOSE_TURN', 'MODEL_REPLY']);
  });

  it('refuses a toolConcurrency outside 1..64 before anything is written', async () => {
    for (const bad of [0, 65, 1.5, Number.NaN]) {
      const store = newStore();
      await expect(startRun({ store, model: scriptedModel([endTurnReply('ok')]), tools: [], task: 't', toolConcurrency: bad })).rejects.toThrow(ToolConcurrencyError);
      expect(await store.exists()).toBe(false);
    }
  });
});

describe('a crash or a stop between completions', () => {
  it('a crash after the first completion records nothing more; the resume reuses it and re-runs the others', async () => {
    const order = new FinishOrder(['b', 'c', 'a']);
    const k = kit((id) => order.turnOf(id));
    const store = newStore();
    const reply = calls(['a', 'lookup'], ['b', 'lookup'], ['c', 'lookup']);
    await expect(
      startRun({ store, model: scriptedModel([reply, endTurnReply('ok')]), tools: tools(k), task: 't', observer: order.observe, crashAfter: 'after-effect-write:1' }),
    ).rejects.toThrow(SimulatedCrash);
    // c was released by b's record and returns after the crash: it must not be recorded.
    await new Promise((r) => setTimeout(r, 50));
    expect(k.timeline.log).toContain('end c');
    expect(await recordOrder(store)).toEqual(['b']);

    order.active = false;
    const events: RunEvent[] = [];
    const result = await resumeRun({ store, model: scriptedModel([reply, endTurnReply('ok')]), tools: tools(k), observer: (e) => events.push(e) });
    expect(result.status).toBe('done');
    expect(events.flatMap((e) => (e.type === 'reconciled' ? [`${e.call.id}:${e.decision}`] : []))).toEqual(['a:re-ran-read-only', 'b:reused', 'c:re-ran-read-only']);
    expect(k.runs).toEqual(new Map([['a', 2], ['b', 1], ['c', 2]]));
    const messages = await messagesOf(store);
    expect(toolUseProblems(messages)).toEqual([]);
    expect((messages[2]!.content as unknown as Array<{ tool_use_id: string }>).map((b) => b.tool_use_id)).toEqual(['a', 'b', 'c']);
  });

  it('a stop asked for mid-turn starts nothing more and records what was in flight first', async () => {
    const controller = new AbortController();
    const k = kit(async () => {
      controller.abort('asked to stop');
      await new Promise((r) => setTimeout(r, 5));
    });
    const store = newStore();
    const reply = calls(['a', 'lookup'], ['b', 'lookup'], ['c', 'lookup'], ['d', 'lookup']);
    await expect(startRun({ store, model: scriptedModel([reply, endTurnReply('ok')]), tools: tools(k), task: 't', toolConcurrency: 2, signal: controller.signal })).rejects.toThrow(RunStoppedError);
    expect([...k.runs.keys()]).toEqual(['a', 'b']);
    expect((await recordOrder(store)).sort()).toEqual(['a', 'b']);
  });
});
