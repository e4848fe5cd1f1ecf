/**
 * The programmatic `tracer` option with the real OpenTelemetry SDK and an in-memory exporter:
 * the spans of a run crashed and resumed, in one trace, with the GenAI attributes, and no
 * content (nor any key) unless asked.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import path from 'node:path';
import { type Context, context, type ContextManager, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

// Shaped like an Anthropic key (assembled here, so that no key-shaped string is committed).
const KEY = ['sk', 'ant', 'api03-THISISNOTAREALKEYBUTLOOKSLIKEONE0123456789'].join('-');

function memoryTracer() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, tracer: provider.getTracer('test') };
}

const script = () =>
  scriptedModel([
    toolUseReply([{ id: 'call_1', name: 'lookup', input: { q: `weather ${KEY}` } }]),
    toolUseReply([{ id: 'call_2', name: 'charge_card', input: { amount: 5 } }]),
    endTurnReply('all done'),
  ]);

const byName = (spans: ReadableSpan[], name: string) => spans.filter((span) => span.name === name);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('the tracer option', () => {
  it('traces a run crashed and resumed as one trace: root, a session per process, model calls, tool calls, saves', async () => {
    const { exporter, tracer } = memoryTracer();
    const dir = tempDir();
    const store = () => new FileStore(path.join(dir, '.durable-agent'));
    const { tools } = countingTools();
    await expect(
      startRun({ store: store(), model: script(), tools, task: 'check the weather', tracer, crashAfter: 'after-save-a:2', command: 'api' }),
    ).rejects.toThrow(SimulatedCrash);
    const result = await resumeRun({ store: store(), model: script(), tools, tracer });
    expect(result.status).toBe('done');

    const spans = exporter.getFinishedSpans();
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
    const [root] = byName(spans, 'durable-agent run');
    expect(root).toBeDefined();
    expect(parentOf(root!)).toBeUndefined();
    expect(root!.attributes['durable_agent.run.id']).toBe(result.runId);

    const header = JSON.parse(fs.readFileSync(path.join(dir, '.durable-agent', 'journal.jsonl'), 'utf8').split('\n')[0]!.replace(/^[^{]*/, ''));
    expect(header.trace).toEqual({ traceId: root!.spanContext().traceId, spanId: root!.spanContext().spanId, traceFlags: 1 });

    const [start] = byName(spans, 'durable-agent start');
    const [resume] = byName(spans, 'durable-agent resume');
    expect(parentOf(start!)).toBe(root!.spanContext().spanId);
    expect(parentOf(resume!)).toBe(root!.spanContext().spanId);
    expect(start!.events.map((e) => e.name)).toContain('durable_agent.crash');
    expect(start!.events.find((e) => e.name === 'durable_agent.crash')!.attributes).toMatchObject({ 'durable_agent.crash.label': 'after-save-a:2' });
    expect(start!.status.code).toBe(2);
    const resumed = resume!.events.find((e) => e.name === 'durable_agent.resume');
    expect(resumed?.attributes).toMatchObject({ 'durable_agent.resume.state': 'pendingTool', 'durable_agent.resume.from_point': 'save-a' });
    expect(resume!.attributes).toMatchObject({ 'durable_agent.status': 'done', 'gen_ai.conversation.id': result.runId });

    // Everything else hangs under one of the two sessions.
    const sessions = new Set([start!.spanContext().spanId, resume!.spanContext().spanId]);
    for (const span of spans.filter((s) => s !== root && s !== start && s !== resume)) expect(sessions.has(parentOf(span)!), span.name).toBe(true);

    const chats = byName(spans, 'chat scripted');
    expect(chats.length).toBe(3);
    expect(chats[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'scripted',
      'gen_ai.response.finish_reasons': ['tool_use'],
      'gen_ai.usage.input_tokens': expect.any(Number),
      'gen_ai.usage.output_tokens': expect.any(Number),
      'gen_ai.usage.cache_read.input_tokens': expect.any(Number),
      'gen_ai.usage.cache_creation.input_tokens': expect.any(Number),
    });

    const lookups = byName(spans, 'execute_tool lookup');
    expect(lookups[0]!.attributes).toMatchObject({ 'gen_ai.tool.name': 'lookup', 'gen_ai.tool.call.id': 'call_1', 'durable_agent.tool.effect': 'read-only' });
    // Crashed after checkpoint A of call_2: the resume verified the charge had not happened and ran it.
    const charges = byName(spans, 'execute_tool charge_card');
    expect(charges).toHaveLength(1);
    expect(charges[0]!.attributes).toMatchObject({
      'gen_ai.tool.call.id': 'call_2',
      'durable_agent.tool.effect': 'side-effect',
      'durable_agent.reconcile.decision': 'verified-not-done-ran',
      'durable_agent.tool.executed': true,
    });
    expect(parentOf(charges[0]!)).toBe(resume!.spanContext().spanId);

    const saves = spans.filter((span) => span.name.startsWith('save '));
    expect(saves.map((span) => span.attributes['durable_agent.save.seq'])).toEqual([...saves.keys()]);
    const firstSave = saves[0]!;
    expect(firstSave.attributes).toMatchObject({ 'durable_agent.save.point': 'save-start', 'durable_agent.save.durable': true });
    expect(firstSave.attributes['durable_agent.save.bytes']).toBeGreaterThan(0);
    expect(firstSave.attributes['durable_agent.save.fsync_ms']).toBeGreaterThanOrEqual(0);

    // No content by default: no messages, no tool input, no task, and so no key.
    const everything = JSON.stringify(spans.map((span) => [span.attributes, span.events]));
    expect(everything).not.toContain('gen_ai.input.messages');
    expect(everything).not.toContain('gen_ai.tool.call.arguments');
    expect(everything).not.toContain('weather');
    expect(everything).not.toContain(KEY);
  });

  it('exports content when asked, with any key taken out', async () => {
    const { exporter, tracer } = memoryTracer();
    const { tools } = countingTools();
    await startRun({ store: new MemoryStore(), model: script(), tools, task: `check the weather with ${KEY}`, tracer, traceContent: true });
    const spans = exporter.getFinishedSpans();
    const chat = byName(spans, 'chat scripted')[1]!;
    expect(String(chat.attributes['gen_ai.input.messages'])).toContain('check the weather');
    expect(String(chat.attributes['gen_ai.output.messages'])).toContain('charge_card');
    const lookup = byName(spans, 'execute_tool lookup')[0]!;
    expect(String(lookup.attributes['gen_ai.tool.call.arguments'])).toContain('weather');
    expect(String(lookup.attributes['gen_ai.tool.call.result'])).toContain('answer to weather');
    const everything = JSON.stringify(spans.map((span) => [span.name, span.attributes, span.events]));
    expect(everything).toContain('[redacted]');
    expect(everything).not.toContain(KEY);
    expect(everything).not.toContain('THISISNOTAREALKEY');
  });

  it('a journal without a trace context (an older one, or a run started untraced) gets a trace of its own on resume', async () => {
    const { exporter, tracer } = memoryTracer();
    const store = new MemoryStore();
    const { tools } = countingTools();
    await expect(startRun({ store, model: script(), tools, task: 't', crashAfter: 'after-effect-write:1' })).rejects.toThrow(SimulatedCrash);
    expect((await store.load()).header.trace).toBeUndefined();
    expect((await resumeRun({ store, model: script(), tools, tracer })).status).toBe('done');
    const spans = exporter.getFinishedSpans();
    const [resume] = byName(spans, 'durable-agent resume');
    expect(parentOf(resume!)).toBeUndefined();
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
    expect(byName(spans, 'execute_tool lookup')[0]!.attributes).toMatchObject({ 'durable_agent.reconcile.decision': 'reused', 'durable_agent.tool.executed': false });
  });

  it('a refused resume ends its session span with the error', async () => {
    const { exporter, tracer } = memoryTracer();
    await expect(resumeRun({ store: new MemoryStore(), model: script(), tools: [], tracer })).rejects.toThrow();
    const [resume] = byName(exporter.getFinishedSpans(), 'durable-agent resume');
    expect(resume!.status.code).toBe(2);
    expect(resume!.events.map((e) => e.name)).toEqual(['exception']);
  });

  it("inside an application's span: the run hangs under it, and a resume inside another links to the run's root", async () => {
    const storage = new AsyncLocalStorage<Context>();
    const manager: ContextManager = {
      active: () => storage.getStore() ?? ROOT_CONTEXT,
      with: (ctx, fn, thisArg, ...args) => storage.run(ctx, () => fn.call(thisArg, ...args)),
      bind: (_ctx, target) => target,
      enable() {
        return this;
      },
      disable() {
        return this;
      },
    };
    context.setGlobalContextManager(manager);
    try {
      const { exporter, tracer } = memoryTracer();
      const store = new MemoryStore();
      const { tools } = countingTools();
      const request = tracer.startSpan('POST /invoices');
      await context.with(trace.setSpan(ROOT_CONTEXT, request), () =>
        expect(startRun({ store, model: script(), tools, task: 't', tracer, crashAfter: 'after-save-a:1' })).rejects.toThrow(SimulatedCrash),
      );
      request.end();
      const later = tracer.startSpan('job');
      await context.with(trace.setSpan(ROOT_CONTEXT, later), () => resumeRun({ store, model: script(), tools, tracer }));
      later.end();
      const spans = exporter.getFinishedSpans();
      const [root] = byName(spans, 'durable-agent run');
      expect(parentOf(root!)).toBe(request.spanContext().spanId);
      const [resume] = byName(spans, 'durable-agent resume');
      expect(parentOf(resume!)).toBe(later.spanContext().spanId);
      expect(resume!.links.map((link) => link.context.spanId)).toEqual([root!.spanContext().spanId]);
    } finally {
      context.disable();
    }
  });
  it('a run whose lock another process took over ends its session with a fencing event, having written nothing more', async () => {
    const { exporter, tracer } = memoryTracer();
    const dir = tempDir();
    const store = () => new FileStore(path.join(dir, '.durable-agent'));
    let release!: () => void;
    let started!: () => void;
    const toolStarted = new Promise<void>((resolve) => (started = resolve));
    const slowLookup = {
      name: 'lookup',
      description: 'looks something up, slowly',
      inputSchema: { type: 'object' },
      readOnly: true,
      run: async () => {
        started();
        await new Promise<void>((resolve) => (release = resolve));
        return 'sunny';
      },
    };
    const model = () => scriptedModel([toolUseReply([{ id: 'call_1', name: 'lookup', input: {} }]), endTurnReply('done')]);
    const first = startRun({ store: store(), model: model(), tools: [slowLookup], task: 'weather', tracer }).catch((error: unknown) => error);
    await toolStarted;
    const quickLookup = { ...slowLookup, run: () => 'sunny' };
    const taker = await resumeRun({ store: store(), model: model(), tools: [quickLookup], takeOver: true });
    expect(taker.status).toBe('done');
    const journalAfterTaker = fs.readFileSync(path.join(dir, '.durable-agent', 'journal.jsonl'));
    release();
    expect(await first).toMatchObject({ name: 'RunLockLostError' });
    expect(fs.readFileSync(path.join(dir, '.durable-agent', 'journal.jsonl'))).toEqual(journalAfterTaker);

    const [start] = byName(exporter.getFinishedSpans(), 'durable-agent start');
    const fenced = start!.events.find((event) => event.name === 'durable_agent.fenced');
    expect(fenced?.attributes).toMatchObject({ 'error.type': 'RunLockLostError' });
    expect(String(fenced?.attributes?.['durable_agent.fenced.reason'])).toContain('no longer holds the run');
    expect(start!.status.code).toBe(2);
  });
});
