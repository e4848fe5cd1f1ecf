/**
 * A fleet run's trace: a worker SIGKILLed mid-run, the run taken over by a second worker once
 * the lease expired, all of it one trace at a real OTLP/HTTP receiver, the take-over an event.
 */
import { describe, expect, it, vi } from 'vitest';
import { runCliAsync, startCli } from '../helpers/cli.ts';
import { startOtlpReceiver } from '../helpers/otlp-receiver.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { pool, postgresAvailable, server, usePostgres } from '../helpers/use-postgres.ts';


describe.skipIf(!postgresAvailable())('traces of a fleet run taken over by another worker', () => {
  usePostgres({ connections: 2 });

  it('the killed worker and the one that took the run over add to one trace; the take-over is an event', async () => {
    await pool.query('CREATE DATABASE traces');
    const url = server.url.replace(/\/postgres$/, '/traces');
    const receiver = await startOtlpReceiver();
    try {
      const env = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.endpoint}/v1/traces`, OTEL_BSP_SCHEDULE_DELAY: '50' };
      const submitted = await runCliAsync(['submit', 'demo', '--database-url', url, '--pace', '250'], { cwd: tempDir() });
      expect(submitted.code, submitted.stderr).toBe(0);
      const runId = submitted.stdout.trim();
      const first = startCli(['worker', '--database-url', url, '--lease-ms', '1500', '--poll-ms', '100'], { cwd: tempDir(), env });
      await vi.waitFor(() => expect(receiver.spans.some((span) => span.name === 'execute_tool read_notes'), 'the first tool span').toBe(true), { timeout: 60_000, interval: 50 });
      first.child.kill('SIGKILL');
      await first.done;
      const firstWorker = /\[worker (\S+)\] started/.exec(first.output())![1]!;

      const second = await runCliAsync(['worker', '--database-url', url, '--lease-ms', '1500', '--poll-ms', '100', '--exit-when-idle'], { cwd: tempDir(), env });
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).toContain(`taken over from ${firstWorker}`);
      await vi.waitFor(() => expect(receiver.spans.some((span) => span.name === 'durable-agent resume'), 'the second session span').toBe(true), { timeout: 60_000, interval: 50 });

      const spans = receiver.spans;
      expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
      const roots = spans.filter((span) => span.name === 'durable-agent run');
      expect(roots).toHaveLength(1);
      expect(roots[0]!.attributes).toMatchObject({ 'durable_agent.store': `PostgreSQL run ${runId}`, 'durable_agent.command': 'worker' });
      const resume = spans.find((span) => span.name === 'durable-agent resume')!;
      expect(resume.parentSpanId).toBe(roots[0]!.spanId);
      expect(resume.attributes).toMatchObject({ 'durable_agent.status': 'done', 'durable_agent.store': `PostgreSQL run ${runId}` });
      expect(resume.attributes['gen_ai.conversation.id']).toBe(roots[0]!.attributes['durable_agent.run.id']);
      const takeOver = resume.events.find((event) => event.name === 'durable_agent.lock.taken_over');
      expect(takeOver?.attributes['durable_agent.lock.previous_holder']).toBe(firstWorker);
      expect(String(takeOver?.attributes['durable_agent.lock.why'])).toContain('lease expired');
      expect(resume.events.some((event) => event.name === 'durable_agent.resume')).toBe(true);
      // Both processes sent saves of the run: under the killed session (whose own span never left) and under the resume.
      const parents = new Set(spans.filter((span) => span.name.startsWith('save ')).map((span) => span.parentSpanId));
      expect(parents).toEqual(new Set([resume.spanId, ...parents].filter((id) => id !== undefined)));
      expect(parents.size).toBe(2);
      expect(spans.some((span) => span.name === 'execute_tool write_report' && span.parentSpanId === resume.spanId)).toBe(true);
    } finally {
      await receiver.close();
    }
  }, 120_000);
});
