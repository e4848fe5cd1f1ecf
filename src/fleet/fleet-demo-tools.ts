/**
 * The demo's tools for a fleet: the notes are the sample notes, and write_report stores the
 * report in PostgreSQL under the call's idempotency key (a repeat does nothing) and appends one
 * audit row per real execution, so anyone can count executions. Its write is fenced: one
 * statement that writes only while the worker still holds the run's lease (it locks the run's row).
 */
import type { Pool } from 'pg';
import { SAMPLE_NOTES } from '../demo/demo-task.ts';
import { wordCount } from '../demo/demo-tools.ts';
import { assertLease, type Lease } from '../store/pg/leases.ts';
import { LeaseLostError } from '../store/pg/pg-errors.ts';
import { defineTool, type ToolDefinition } from '../tools/tool.ts';
import { type Pace, stepDelay } from '../util/pace.ts';

export function fleetDemoTools(pool: Pool, lease: Lease, pace: Pace = {}): ToolDefinition[] {
  return [
    defineTool<Record<string, never>>({
      name: 'read_notes',
      description: 'Read the sales notes and return their text.',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      readOnly: true,
      async run(_input, ctx) {
        await stepDelay(pace, ctx.signal);
        return SAMPLE_NOTES;
      },
    }),
    defineTool<{ text: string }>({
      name: 'count_words',
      description: 'Count the words in a text.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
      readOnly: true,
      async run({ text }, ctx) {
        await stepDelay(pace, ctx.signal);
        return `${wordCount(text)} words`;
      },
    }),
    defineTool<{ content: string }>({
      name: 'write_report',
      description: 'Store the finished report.',
      inputSchema: { type: 'object', properties: { content: { type: 'string', minLength: 1 } }, required: ['content'], additionalProperties: false },
      readOnly: false,
      async run({ content }, ctx) {
        await stepDelay(pace, ctx.signal);
        // One statement, so one transaction: the run's row locked under this lease, the report and its audit row.
        const { rows } = await pool.query<{ held: boolean }>(
          `WITH holder AS (
             SELECT id FROM da_runs WHERE id = $2 AND lease_epoch = $5 FOR UPDATE
           ), report AS (
             INSERT INTO demo_reports (idempotency_key, run_id, content) SELECT $1, $2, $3 FROM holder ON CONFLICT (idempotency_key) DO NOTHING
           ), audit AS (
             INSERT INTO demo_report_audit (idempotency_key, run_id, tool_use_id, worker, lease_epoch) SELECT $1, $2, $6, $4, $5 FROM holder
           )
           SELECT EXISTS (SELECT 1 FROM holder) AS held`,
          [ctx.idempotencyKey, lease.runId, content, lease.owner, lease.epoch, ctx.toolUseId],
        );
        // Not held: nothing was written; say whose lease it is now.
        if (!rows[0]?.held) {
          await assertLease(pool, lease);
          throw new LeaseLostError(lease.runId, lease.epoch, null, null);
        }
        return `Stored the report (${Buffer.byteLength(content)} bytes).`;
      },
      async verify({ content }, ctx) {
        const { rows } = await pool.query<{ content: string }>('SELECT content FROM demo_reports WHERE idempotency_key = $1', [ctx.idempotencyKey]);
        const stored = rows[0];
        if (!stored) return { happened: false };
        return stored.content === content
          ? { happened: true, result: 'The report was already stored before the resume; it was not stored again.' }
          : { happened: false };
      },
    }),
  ];
}
