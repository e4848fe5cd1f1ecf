/** Tools that count their real executions, per tool_use_id, to prove nothing ran twice. */
import { defineTool, type ToolDefinition } from '../../src/tools/tool.ts';

export class ExecutionCounter {
  readonly runs = new Map<string, number>();
  readonly keys = new Map<string, string>();
  record(toolUseId: string, idempotencyKey: string): void {
    this.runs.set(toolUseId, (this.runs.get(toolUseId) ?? 0) + 1);
    this.keys.set(toolUseId, idempotencyKey);
  }
  of(toolUseId: string): number {
    return this.runs.get(toolUseId) ?? 0;
  }
}

export interface CountingTools {
  counter: ExecutionCounter;
  /** Effects that happened (what verify() can look at). */
  charged: Set<string>;
  tools: ToolDefinition[];
}

export function countingTools(): CountingTools {
  const counter = new ExecutionCounter();
  const charged = new Set<string>();
  const lookup = defineTool<{ q: string }>({
    name: 'lookup',
    description: 'Look something up (read-only).',
    inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    readOnly: true,
    run: ({ q }, ctx) => {
      counter.record(ctx.toolUseId, ctx.idempotencyKey);
      return `answer to ${q}`;
    },
  });
  const sendEmail = defineTool<{ to: string }>({
    name: 'send_email',
    description: 'Send an email (a side effect that cannot be checked afterwards).',
    inputSchema: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
    readOnly: false,
    run: ({ to }, ctx) => {
      counter.record(ctx.toolUseId, ctx.idempotencyKey);
      return `sent to ${to}`;
    },
  });
  const charge = defineTool<{ amount: number }>({
    name: 'charge_card',
    description: 'Charge a card (a side effect that can be checked by its idempotency key).',
    inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
    readOnly: false,
    run: ({ amount }, ctx) => {
      counter.record(ctx.toolUseId, ctx.idempotencyKey);
      charged.add(ctx.idempotencyKey);
      return `charged ${amount}`;
    },
    verify: (_input, ctx) => ({ happened: charged.has(ctx.idempotencyKey) }),
  });
  const explode = defineTool<Record<string, never>>({
    name: 'explode',
    description: 'Always throws.',
    inputSchema: { type: 'object' },
    readOnly: false,
    run: (_input, ctx) => {
      counter.record(ctx.toolUseId, ctx.idempotencyKey);
      throw new Error('boom');
    },
  });
  const hang = defineTool<Record<string, never>>({
    name: 'hang',
    description: 'Never finishes.',
    inputSchema: { type: 'object' },
    readOnly: true,
    timeoutMs: 50,
    run: (_input, ctx) => {
      counter.record(ctx.toolUseId, ctx.idempotencyKey);
      return new Promise(() => {});
    },
  });
  return { counter, charged, tools: [lookup, sendEmail, charge, explode, hang] };
}
