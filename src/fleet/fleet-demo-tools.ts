/**
 * The demo's tools for a fleet: the notes are the sample notes, and write_report stores the
 * report in PostgreSQL under the call's idempotency key (a repeat does nothing) and appends one
 * audit row per real execution, so anyone can count executions. Its write is fenced: one
 * statement that writes only while the worker still holds the run's lease (it locks the run's row).
 */
import { SAMPLE_NOTES } from '../demo/demo-task.ts';
import { wordCount } from '../demo/demo-tools.ts';
import { storeDemoReport, storedDemoReport } from '../store/pg/demo-reports.ts';
import { ensureDemoTables } from '../store/pg/demo-tables.ts';
import { assertLease, type Lease } from '../store/pg/leases.ts';
import { LeaseLostError } from '../store/pg/pg-errors.ts';
import type { Database } from '../store/pg/pool.ts';
import { defineTool, type ToolDefinition } from '../tools/tool.ts';
import { type Pace, stepDelay } from '../util/pace.ts';

export function fleetDemoTools(pool: Database, lease: Lease, pace: Pace = {}): ToolDefinition[] {
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
        // The demo's own tables, not the product's: made on its first write through this pool.
        await ensureDemoTables(pool);
        const held = await storeDemoReport(pool, { idempotencyKey: ctx.idempotencyKey, runId: lease.runId, content, owner: lease.owner, epoch: lease.epoch, toolUseId: ctx.toolUseId });
        // Not held: nothing was written; say whose lease it is now.
        if (!held) {
          await assertLease(pool, lease);
          throw new LeaseLostError(lease.runId, lease.epoch, null, null);
        }
        return `Stored the report (${Buffer.byteLength(content)} bytes).`;
      },
      async verify({ content }, ctx) {
        await ensureDemoTables(pool);
        const stored = await storedDemoReport(pool, ctx.idempotencyKey);
        if (stored === null) return { happened: false };
        return stored === content
          ? { happened: true, result: 'The report was already stored before the resume; it was not stored again.' }
          : { happened: false };
      },
    }),
  ];
}
