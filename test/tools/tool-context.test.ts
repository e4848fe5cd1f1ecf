import { describe, expect, it, vi } from 'vitest';
import { executeCall, idempotencyKeyFor } from '../../src/tools/execute-call.ts';
import type { ToolContext } from '../../src/tools/tool.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { ToolRegistry } from '../../src/tools/tool-registry.ts';

const call = { id: 'toolu_ctx_1', name: 'probe', input: {} };

describe("a tool's context, made as the tool reads it", () => {
  it('gives the same idempotency key on every read, and in a copy of the context', async () => {
    let seen: ToolContext | null = null;
    const probe = defineTool({ name: 'probe', description: 'probe', inputSchema: { type: 'object' }, readOnly: true, run: (_input, ctx) => {
      seen = ctx;
      return 'ok';
    } });
    await executeCall(new ToolRegistry([probe]), 'run-1', call, 1_000);
    const ctx = seen as unknown as ToolContext;
    expect(ctx.idempotencyKey).toBe(idempotencyKeyFor('run-1', 'toolu_ctx_1'));
    expect(ctx.idempotencyKey).toBe(ctx.idempotencyKey);
    expect({ ...ctx }).toMatchObject({ toolUseId: 'toolu_ctx_1', runId: 'run-1', idempotencyKey: idempotencyKeyFor('run-1', 'toolu_ctx_1') });
  });

  it('a signal first read after the time limit passed is already aborted, with the timeout as its reason', async () => {
    let late: AbortSignal | null = null;
    const slow = defineTool({
      name: 'probe',
      description: 'probe',
      inputSchema: { type: 'object' },
      readOnly: true,
      timeoutMs: 10,
      run: async (_input, ctx) => {
        await new Promise((resolve) => setTimeout(resolve, 80));
        late = ctx.signal;
        return 'too late';
      },
    });
    const outcome = await executeCall(new ToolRegistry([slow]), 'run-1', call, 1_000);
    expect(outcome.kind).toBe('timed-out');
    await vi.waitFor(() => expect(late).not.toBeNull(), { timeout: 30_000, interval: 10 });
    const signal = late as unknown as AbortSignal;
    expect(signal.aborted).toBe(true);
    expect(String(signal.reason)).toContain('timed out after 10 ms');
  });

  it('a signal read while the call runs is aborted when a stop is asked', async () => {
    const stop = new AbortController();
    let signal: AbortSignal | null = null;
    const waits = defineTool({
      name: 'probe',
      description: 'probe',
      inputSchema: { type: 'object' },
      readOnly: true,
      run: (_input, ctx) =>
        new Promise<string>((_resolve, reject) => {
          signal = ctx.signal;
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
          stop.abort(new Error('asked to stop'));
        }),
    });
    const outcome = await executeCall(new ToolRegistry([waits]), 'run-1', call, 1_000, stop.signal);
    expect(outcome).toMatchObject({ kind: 'threw', is_error: true });
    expect(String(outcome.content)).toContain('asked to stop');
    expect((signal as unknown as AbortSignal).aborted).toBe(true);
  });
});
