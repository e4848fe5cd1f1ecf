/**
 * The command line's traces, end to end: the real CLI, the official OTLP/HTTP exporter, and a
 * real receiver on 127.0.0.1. A demo killed with SIGKILL and resumed is one trace; a simulated
 * crash and an interrupt flush their spans before the process exits; no key is ever sent.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SAMPLE_NOTES } from '../../src/demo/demo-task.ts';
import { runCliAsync, startCli } from '../helpers/cli.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../helpers/otlp-receiver.ts';
import { tempDir } from '../helpers/temp-dir.ts';

// Shaped like an Anthropic key (assembled here, so that no key-shaped string is committed).
const KEY = ['sk', 'ant', 'api03-NOTAREALKEY-bXlzZWNyZXRrZXlmb3J0ZXN0aW5nb25seQ'].join('-');

let receiver: OtlpReceiver;
beforeEach(async () => {
  receiver = await startOtlpReceiver();
});
afterEach(async () => {
  await receiver.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function otelEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_SERVICE_NAME: 'agents-under-test', ...extra };
}

const named = (name: string) => receiver.spans.filter((span) => span.name === name);
const one = (name: string): ReceivedSpan => {
  const spans = named(name);
  expect(spans.map((span) => span.name), `exactly one span "${name}"`).toEqual([name]);
  return spans[0]!;
};
const eventOf = (span: ReceivedSpan, name: string) => span.events.find((event) => event.name === name);

describe('traces over OTLP/HTTP from the command line', () => {
  it('a demo killed with SIGKILL and resumed is one trace: the root, both processes, the resume and its reconcile decision', async () => {
    const dir = tempDir();
    // Notes holding a key: read_notes returns it, and --otel-content exports tool results.
    fs.writeFileSync(path.join(dir, 'sales-notes.txt'), `${SAMPLE_NOTES}\nprovider key: ${KEY}\n`);
    const env = otelEnv({ ANTHROPIC_API_KEY: KEY });
    const killed = await runCliAsync(['demo', '--pace', '100', '--otel-content'], {
      cwd: dir,
      env: { ...env, CRASH_AFTER: 'after-effect-write:2', CRASH_MODE: 'sigkill' },
    });
    expect(killed.signal).toBe('SIGKILL');
    const killedSpans = receiver.spans.length;
    expect(killedSpans, 'the killed process exported spans while it ran').toBeGreaterThan(0);

    const resumed = await runCliAsync(['demo', '--resume', '--otel-content'], { cwd: dir, env });
    expect(resumed.code, resumed.stderr).toBe(0);
    await vi.waitFor(() => expect(named('durable-agent resume').length === 1, 'the resumed session span').toBe(true), { timeout: 20_000, interval: 25 });

    expect(receiver.contentTypes.every((type) => type.startsWith('application/json'))).toBe(true);
    const traceIds = new Set(receiver.spans.map((span) => span.traceId));
    expect(traceIds.size).toBe(1);
    const pids = new Set(receiver.spans.map((span) => span.attributes['process.pid'] ?? span.resource['process.pid']).filter(Boolean));
    expect(receiver.spans.every((span) => span.resource['service.name'] === 'agents-under-test')).toBe(true);

    const root = one('durable-agent run');
    expect(root.parentSpanId).toBeNull();
    expect(root.attributes).toMatchObject({ 'durable_agent.command': 'demo', 'gen_ai.request.model': 'scripted-demo' });
    const resume = one('durable-agent resume');
    expect(resume.parentSpanId).toBe(root.spanId);
    expect(pids.size).toBeGreaterThanOrEqual(2);
    // The killed session's span never ended, so it never left; its children did, under the same trace.
    expect(named('durable-agent start')).toEqual([]);
    const readNotes = one('execute_tool read_notes');
    expect(readNotes.parentSpanId).not.toBe(resume.spanId);
    expect(readNotes.attributes).toMatchObject({ 'gen_ai.tool.call.id': 'toolu_01', 'durable_agent.tool.effect': 'read-only' });
    expect(String(readNotes.attributes['gen_ai.tool.call.result'])).toContain('provider key: [redacted]');

    expect(eventOf(resume, 'durable_agent.resume')?.attributes).toMatchObject({
      'durable_agent.resume.from_point': 'effect-write',
      'durable_agent.resume.state': 'effectRecorded',
    });
    expect(resume.attributes).toMatchObject({ 'durable_agent.status': 'done', 'durable_agent.session': 'resume' });
    // The ledger held count_words' result: reused, not run again.
    // (Its run in the killed process ended just before the kill: that span may not have left.)
    const reused = named('execute_tool count_words').filter((span) => span.attributes['durable_agent.reconcile.decision'] === 'reused');
    expect(reused).toHaveLength(1);
    expect(reused[0]!.attributes).toMatchObject({ 'durable_agent.tool.executed': false, 'gen_ai.tool.call.id': 'toolu_02' });
    expect(reused[0]!.parentSpanId).toBe(resume.spanId);
    const writeReport = one('execute_tool write_report');
    expect(writeReport.parentSpanId).toBe(resume.spanId);
    expect(writeReport.attributes['durable_agent.tool.effect']).toBe('side-effect');

    const chats = named('chat scripted-demo');
    expect(chats.length).toBeGreaterThanOrEqual(3);
    expect(chats.at(-1)!.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.response.finish_reasons': ['end_turn'] });
    const saves = receiver.spans.filter((span) => span.name.startsWith('save '));
    expect(saves.find((span) => span.attributes['durable_agent.save.point'] === 'save-b')?.attributes).toMatchObject({
      'durable_agent.save.durable': true,
      'durable_agent.save.fsync_ms': expect.any(Number),
      'durable_agent.save.bytes': expect.any(Number),
    });

    for (const body of receiver.bodies) expect(body).not.toContain(KEY);
    expect(receiver.bodies.join('\n')).not.toContain('NOTAREALKEY');
  }, 60_000);

  it('a simulated crash (CRASH_MODE=exit) flushes its spans before exiting, with the crash as an event; the resume joins the trace', async () => {
    const dir = tempDir();
    const crashed = await runCliAsync(['demo'], { cwd: dir, env: otelEnv({ CRASH_AFTER: 'after-save-a:2' }) });
    expect(crashed.code).toBe(137);
    expect(crashed.stdout).toContain('[kill] simulated kill at after-save-a:2');
    const start = one('durable-agent start');
    expect(eventOf(start, 'durable_agent.crash')?.attributes).toMatchObject({ 'durable_agent.crash.label': 'after-save-a:2' });
    expect(start.status.code).toBe(2);
    // No content unless asked.
    expect(receiver.bodies.join('\n')).not.toContain('gen_ai.input.messages');
    expect(receiver.bodies.join('\n')).not.toContain('Q3 sales');

    const resumed = await runCliAsync(['demo', '--resume'], { cwd: dir, env: otelEnv() });
    expect(resumed.code, resumed.stderr).toBe(0);
    const resume = one('durable-agent resume');
    expect(resume.traceId).toBe(start.traceId);
    expect(resume.parentSpanId).toBe(one('durable-agent run').spanId);
    expect(start.parentSpanId).toBe(resume.parentSpanId);
    expect(one('execute_tool count_words').attributes).toMatchObject({ 'durable_agent.reconcile.decision': 're-ran-read-only', 'durable_agent.tool.executed': true });
  }, 60_000);

  it('Ctrl-C ends the session span with the interrupt and sends it before exiting', async () => {
    const dir = tempDir();
    const run = startCli(['demo', '--pace', '300'], { cwd: dir, env: otelEnv() });
    await vi.waitFor(() => expect(named('execute_tool read_notes').length === 1, 'the first spans').toBe(true), { timeout: 20_000, interval: 25 });
    run.child.kill('SIGINT');
    const stopped = await run.done;
    expect(stopped.code).toBe(130);
    const start = one('durable-agent start');
    expect(eventOf(start, 'durable_agent.interrupted')?.attributes).toMatchObject({ 'durable_agent.signal': 'SIGINT' });
  }, 60_000);

  it('a failure is recorded on the session span and sent before the process exits', async () => {
    const dir = tempDir();
    // A run that is not there: the resume is refused, and the span says why.
    const refused = await runCliAsync(['demo', '--resume'], { cwd: dir, env: otelEnv() });
    expect(refused.code).toBe(2);
    const resume = one('durable-agent resume');
    expect(resume.status.code).toBe(2);
    expect(eventOf(resume, 'exception')?.attributes).toMatchObject({ 'exception.type': 'StoreMissingError' });
  }, 60_000);

  it('sends nothing when OTEL_SDK_DISABLED=true, although an endpoint is set', async () => {
    const dir = tempDir();
    const run = await runCliAsync(['demo'], { cwd: dir, env: otelEnv({ OTEL_SDK_DISABLED: 'true' }) });
    expect(run.code, run.stderr).toBe(0);
    await sleep(200);
    expect(receiver.bodies).toEqual([]);
  }, 60_000);
  it('refuses gRPC (exit 2, nothing run, nothing sent) and takes http/protobuf as OTLP/HTTP', async () => {
    const dir = tempDir();
    const grpc = await runCliAsync(['demo'], { cwd: dir, env: otelEnv({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }) });
    expect(grpc.code).toBe(2);
    expect(grpc.stderr).toContain('OTEL_EXPORTER_OTLP_PROTOCOL=grpc: durable-agent exports traces over OTLP/HTTP only. Nothing was run.');
    expect(fs.existsSync(path.join(dir, '.durable-agent'))).toBe(false);
    await sleep(200);
    expect(receiver.bodies).toEqual([]);

    const protobuf = await runCliAsync(['demo'], { cwd: dir, env: otelEnv({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }) });
    expect(protobuf.code, protobuf.stderr).toBe(0);
    await vi.waitFor(() => expect(receiver.spans.some((span) => span.name === 'durable-agent start'), 'the spans').toBe(true), { timeout: 20_000, interval: 25 });
  }, 60_000);
});
