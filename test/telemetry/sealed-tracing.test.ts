/**
 * Traces of sealed runs: content attributes (messages, tool inputs and results, the task) leave
 * only when tracing content was asked for AND the process holds the run's key. Not asked: no
 * span of a sealed run crashed and resumed holds any of its content, nor a sealed string, and its
 * sessions say it is sealed. Asked, by the process that drives it (which holds the key): the
 * content, opened. A run read sealed (its key not held) exports none, asked or not.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { KeyRing } from '../../src/seal/keys.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { RunTracing } from '../../src/telemetry/run-tracing.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const TASK = 'Send Ana Ortega the balance of account 4471';
const SECRETS = ['Ana Ortega', 'account 4471', 'ana.ortega@example.com', 'answer to balance'];

function memoryTracer() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, tracer: provider.getTracer('test') };
}

const script = () =>
  scriptedModel([
    toolUseReply([{ id: 'toolu_a', name: 'lookup', input: { q: 'balance of account 4471' } }], 'Looking up Ana Ortega.'),
    toolUseReply([{ id: 'toolu_b', name: 'send_email', input: { to: 'ana.ortega@example.com' } }]),
    endTurnReply('Ana Ortega was told.'),
  ]);

/** Every attribute and event attribute of the spans, as one text. */
function spanText(spans: ReadableSpan[]): string {
  return JSON.stringify(spans.map((span) => ({ name: span.name, attributes: span.attributes, events: span.events.map((event) => ({ name: event.name, attributes: event.attributes })), status: span.status })));
}

async function tracedSealedRun(traceContent: boolean) {
  const { exporter, tracer } = memoryTracer();
  const keys = KeyRing.of([{ id: 'k1', key: randomBytes(32) }]);
  const dir = path.join(tempDir('da-sealed-trace-'), '.durable-agent');
  const { tools } = countingTools();
  await expect(startRun({ store: new FileStore(dir), keys, model: script(), tools, task: TASK, tracer, traceContent, crashAfter: 'after-effect-write:1' })).rejects.toThrow(SimulatedCrash);
  const result = await resumeRun({ store: new FileStore(dir), keys, model: script(), tools, tracer, traceContent });
  expect(result.status).toBe('done');
  return exporter.getFinishedSpans();
}

describe('a sealed run traced', () => {
  it('without content asked: none of its content in any span, no sealed string, its sessions marked sealed', async () => {
    const spans = await tracedSealedRun(false);
    const text = spanText(spans);
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    expect(text).not.toContain('sealed:1:');
    for (const session of spans.filter((span) => span.name === 'durable-agent start' || span.name === 'durable-agent resume')) {
      expect(session.attributes['durable_agent.sealed']).toBe(true);
    }
    expect(spans.some((span) => span.attributes['gen_ai.tool.name'] === 'send_email')).toBe(true);
  });

  it('with content asked, by the process that holds its key: the content, opened', async () => {
    const spans = await tracedSealedRun(true);
    const text = spanText(spans);
    expect(text).toContain('Ana Ortega');
    expect(text).not.toContain('sealed:1:');
    const tool = spans.find((span) => span.name === 'execute_tool send_email' && span.attributes['durable_agent.tool.executed'] === true);
    expect(tool?.attributes['gen_ai.tool.call.arguments']).toBe('{"to":"ana.ortega@example.com"}');
  });

  it('read sealed (its key not held here): no content attribute, though content was asked', () => {
    const { exporter, tracer } = memoryTracer();
    const tracing = new RunTracing(tracer, { content: true, command: 'api', session: 'resume' });
    tracing.joinRun({ format: 'durable-agent/journal', version: 5, runId: 'r1', createdAt: 0, sealed: 'rk-0123456789abcdef' } as never);
    tracing.runSealing({ sealed: true, keyHeld: false });
    expect(tracing.exportsContent).toBe(false);
    tracing.observer({ type: 'model-call', model: 'claude', maxTokens: 10, turn: 1, messages: [{ role: 'user', content: TASK }], system: null } as never);
    tracing.observer({ type: 'model-reply', stopReason: 'end_turn', reply: { content: [{ type: 'text', text: 'Ana Ortega' }], model: 'claude' }, usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 }, usageNote: null } as never);
    tracing.end(null);
    const text = spanText(exporter.getFinishedSpans());
    expect(text).not.toContain('Ana Ortega');
    expect(text).not.toContain('gen_ai.input.messages');

    const plain = new RunTracing(memoryTracer().tracer, { content: true, command: 'api', session: 'resume' });
    plain.joinRun({ format: 'durable-agent/journal', version: 4, runId: 'r2', createdAt: 0 } as never);
    expect(plain.exportsContent).toBe(true);
    plain.end(null);
  });
});
