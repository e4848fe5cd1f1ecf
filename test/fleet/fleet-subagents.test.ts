/**
 * Sub-agents in a fleet: a parent's sub-agent calls queue their children as runs of their own,
 * driven by whichever worker takes them up, while the parent waits without holding a slot — a
 * worker of one slot drives the parent, both children and the parent again to its end. Each
 * child is queued once under its derived id, its header names the parent and the call, and each
 * child's side effect happens once.
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { subagentTool } from '../../src/index.ts';
import { submitRun } from '../../src/fleet/submit-run.ts';
import { Worker } from '../../src/fleet/worker.ts';
import { openDatabase } from '../../src/store/pg/pool.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { auditOf, editorAgent, writerAgent } from '../helpers/subagent-agents.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';

function agents(dir: string) {
  return { editor: editorAgent([subagentTool(writerAgent(dir))]) };
}

describe.skipIf(!postgresAvailable())('sub-agents in a fleet', () => {
  usePostgres({ connections: 2 });

  it('a worker of one slot drives the parent, its two queued children and the parent again to its end', async () => {
    const dir = tempDir('da-fleet-subagents-');
    const pool = await openDatabase(await freshDatabase('fleet_subagents'), 6);
    try {
      const { editor } = agents(dir);
      const lines: string[] = [];
      const worker = new Worker({ pool, agents: [editor], runConcurrency: 1, leaseMs: 60_000, exitWhenIdle: true, pollIntervalMs: 50, log: (line) => lines.push(line) });
      await submitRun(pool, { agent: editor, task: 'Write two notes.', runId: 'editor-1' });
      await worker.run();
      const { rows } = await pool.query<{ id: string; state: string; finished: boolean; spec: { agent: string; calledBy?: { runId: string; toolUseId: string } } }>('SELECT id, state, finished, spec FROM da_runs ORDER BY id');
      expect(rows.map((row) => [row.id, row.state, row.spec.agent, row.spec.calledBy ?? null]), lines.join('\n')).toEqual([
        ['editor-1', 'done', 'editor', null],
        ['editor-1.toolu_a', 'done', 'writer', { runId: 'editor-1', toolUseId: 'toolu_a' }],
        ['editor-1.toolu_b', 'done', 'writer', { runId: 'editor-1', toolUseId: 'toolu_b' }],
      ]);
      const parent = await new PgRunStore(pool, 'editor-1').load();
      const last = parent.records[parent.records.length - 1]!.record;
      expect((last as { finalText?: string }).finalText).toBe(`done: ${JSON.stringify('wrote "note A"')} / ${JSON.stringify('wrote "note B"')}`);
      for (const id of ['editor-1.toolu_a', 'editor-1.toolu_b']) {
        expect((await new PgRunStore(pool, id).load()).header.calledBy).toEqual({ runId: 'editor-1', toolUseId: id.slice('editor-1.'.length) });
      }
      // Each child's note written once.
      const audit = auditOf(dir);
      expect(audit).toHaveLength(2);
      expect(new Set(audit).size).toBe(2);
      // The parent's first take-up queued both children (its calls ran side by side), then let go.
      expect(lines.filter((line) => line.includes('waits for its sub-agent run'))).toEqual([expect.stringContaining('run editor-1: waits for its sub-agent runs editor-1.toolu_a, editor-1.toolu_b (queued for any worker)')]);
    } finally {
      await pool.end();
    }
  }, 60_000);

  it("each child's trace hangs under the parent's execute_tool span that queued it, in the parent's trace", async () => {
    const dir = tempDir('da-fleet-subagents-trace-');
    const pool = await openDatabase(await freshDatabase('fleet_subagents_trace'), 6);
    try {
      const exporter = new InMemorySpanExporter();
      const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
      const { editor } = agents(dir);
      const lines: string[] = [];
      // Two workers, as two processes would be: what joins the traces is the queued child's traceparent, not a shared context.
      const workers = [0, 1].map(() => new Worker({ pool, agents: [editor], runConcurrency: 1, leaseMs: 60_000, exitWhenIdle: true, pollIntervalMs: 50, log: (line) => lines.push(line), tracer }));
      await submitRun(pool, { agent: editor, task: 'Write two notes.', runId: 'editor-1' });
      await Promise.all(workers.map((worker) => worker.run()));
      const spans = exporter.getFinishedSpans();
      expect(new Set(spans.map((span) => span.spanContext().traceId)).size, lines.join('\n')).toBe(1);
      const roots = spans.filter((span) => span.name === 'durable-agent run');
      const childRoots = roots.filter((span) => String(span.attributes['durable_agent.run.id']).startsWith('editor-1.'));
      expect(new Set(childRoots.map((span) => span.attributes['durable_agent.run.id']))).toEqual(new Set(['editor-1.toolu_a', 'editor-1.toolu_b']));
      const toolSpans = new Map(spans.filter((span) => span.name === 'execute_tool writer').map((span) => [span.spanContext().spanId, span]));
      for (const root of childRoots) {
        const parent = toolSpans.get(root.parentSpanContext!.spanId);
        expect(parent, `${root.attributes['durable_agent.run.id']} hangs under no execute_tool writer span`).toBeDefined();
        // Under the call that queued it: the span's call id is the child's.
        expect(`editor-1.${String(parent!.attributes['gen_ai.tool.call.id'])}`).toBe(root.attributes['durable_agent.run.id']);
      }
      expect(spans.filter((span) => span.name === 'execute_tool write_note')).toHaveLength(2);
    } finally {
      await pool.end();
    }
  }, 60_000);
});
