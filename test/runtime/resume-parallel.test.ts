/**
 * A resume settles the open calls of a killed turn by the tool scheduler's rule: read-only
 * re-runs side by side up to toolConcurrency, each recorded as it finishes; a call with a side
 * effect alone, in the model's order; the results go back in the model's order. What overlapped
 * is read from the start and end times the tools themselves recorded, not from wall-clock totals.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ModelReply } from '../../machines/agent-loop.types.ts';
import type { Model, ModelRequest } from '../../src/model/model.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { ledgerEntriesOf } from '../../src/store/journal/journal-codec.ts';
import { defineTool, type ToolDefinition } from '../../src/tools/tool.ts';
import { toolUseProblems } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const CALL_MS = 200;

/** When each run of a call started and ended, as the tool saw it. */
interface Span {
  id: string;
  start: number;
  end: number;
}

function tools(spans: Span[], ms: number): ToolDefinition[] {
  const timed = (name: string, readOnly: boolean, extra: Partial<ToolDefinition> = {}) =>
    defineTool<{ q: string }>({
      name,
      description: name,
      inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      readOnly,
      ...extra,
      run: async ({ q }, ctx) => {
        const start = performance.now();
        await new Promise((resolve) => setTimeout(resolve, ms));
        spans.push({ id: ctx.toolUseId, start, end: performance.now() });
        return `${name} ${q}`;
      },
    });
  return [timed('lookup', true), timed('charge_card', false, { verify: () => ({ happened: false }) })];
}

const overlaps = (a: Span, b: Span) => a.start < b.end && b.start < a.end;

function recordingModel(steps: ModelReply[]): Model & { requests: ModelRequest[] } {
  const inner = scriptedModel(steps);
  const requests: ModelRequest[] = [];
  return { name: 'recording', requests, createMessage: (request) => (requests.push(request), inner.createMessage(request)) };
}

/** A run killed right after checkpoint A of a turn of these calls: every call open, none run. */
async function killedAtCheckpointA(dir: string, reply: ModelReply): Promise<void> {
  const store = new FileStore(path.join(dir, '.durable-agent'));
  const crashed = await startRun({ store, model: scriptedModel([reply, endTurnReply('unused')]), tools: tools([], 1), task: 't', crashAfter: 'after-save-a:1' }).catch((e: unknown) => e);
  store.close();
  expect(crashed).toBeInstanceOf(SimulatedCrash);
}

const calls = (...specs: Array<[string, string]>) => toolUseReply(specs.map(([id, name]) => ({ id, name, input: { q: id } })));

describe('a resume re-runs open read-only calls side by side', () => {
  it('four open lookups of 200 ms run at once (the default toolConcurrency 4), recorded as they finish, results in the model’s order', async () => {
    const dir = tempDir();
    const reply = calls(['a', 'lookup'], ['b', 'lookup'], ['c', 'lookup'], ['d', 'lookup']);
    await killedAtCheckpointA(dir, reply);
    const spans: Span[] = [];
    const events: RunEvent[] = [];
    const model = recordingModel([reply, endTurnReply('done')]);
    const store = new FileStore(path.join(dir, '.durable-agent'));
    const result = await resumeRun({ store, model, tools: tools(spans, CALL_MS), observer: (event) => events.push(event) });
    store.close();
    expect(result.status).toBe('done');
    expect(spans.map((s) => s.id).sort()).toEqual(['a', 'b', 'c', 'd']);
    // Every re-run was in flight while every other one was.
    for (const a of spans) for (const b of spans) if (a !== b) expect(overlaps(a, b), `${a.id} and ${b.id} overlap`).toBe(true);
    expect(events.filter((e) => e.type === 'reconciled').map((e) => e.type === 'reconciled' && [e.call.id, e.decision])).toEqual([
      ['a', 're-ran-read-only'],
      ['b', 're-ran-read-only'],
      ['c', 're-ran-read-only'],
      ['d', 're-ran-read-only'],
    ]);
    // Recorded in the order they finished; sent back in the model's.
    const loaded = await new FileStore(path.join(dir, '.durable-agent')).load();
    const recorded = loaded.records.filter((r) => r.record.event === 'TOOL_RESULT').flatMap((r) => ledgerEntriesOf(r.record).map((o) => o.tool_use_id));
    expect(recorded).toEqual([...spans].sort((x, y) => x.end - y.end).map((s) => s.id));
    const results = model.requests[0]!.messages.at(-1)!;
    expect(Array.isArray(results.content) && results.content.map((block) => block.type === 'tool_result' && block.tool_use_id)).toEqual(['a', 'b', 'c', 'd']);
    expect(toolUseProblems(model.requests[0]!.messages)).toEqual([]);
  });

  it('never more than toolConcurrency at once: five open lookups with toolConcurrency 2', async () => {
    const dir = tempDir();
    const reply = calls(['a', 'lookup'], ['b', 'lookup'], ['c', 'lookup'], ['d', 'lookup'], ['e', 'lookup']);
    await killedAtCheckpointA(dir, reply);
    const spans: Span[] = [];
    const store = new FileStore(path.join(dir, '.durable-agent'));
    const result = await resumeRun({ store, model: scriptedModel([reply, endTurnReply('done')]), tools: tools(spans, 50), toolConcurrency: 2 });
    store.close();
    expect(result.status).toBe('done');
    const most = Math.max(...spans.map((s) => spans.filter((o) => o.start <= s.start && s.start < o.end).length));
    expect(most).toBe(2);
  });

  it('a call with a side effect runs alone, in the model’s order: after the lookups before it, before those after it', async () => {
    const dir = tempDir();
    const reply = calls(['a', 'lookup'], ['b', 'lookup'], ['pay', 'charge_card'], ['c', 'lookup'], ['d', 'lookup']);
    await killedAtCheckpointA(dir, reply);
    const spans: Span[] = [];
    const store = new FileStore(path.join(dir, '.durable-agent'));
    const result = await resumeRun({ store, model: scriptedModel([reply, endTurnReply('done')]), tools: tools(spans, 50) });
    store.close();
    expect(result.status).toBe('done');
    const span = (id: string) => spans.find((s) => s.id === id)!;
    expect(overlaps(span('a'), span('b'))).toBe(true);
    expect(overlaps(span('c'), span('d'))).toBe(true);
    for (const id of ['a', 'b']) expect(span(id).end).toBeLessThanOrEqual(span('pay').start);
    for (const id of ['c', 'd']) expect(span('pay').end).toBeLessThanOrEqual(span(id).start);
  });
});
