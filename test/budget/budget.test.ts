/**
 * Budgets on the scripted path (both stores): checked before each model call, a stop that a
 * resume with a larger budget picks up without asking the model again for what it answered.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Message, ModelReply } from '../../machines/agent-loop.types.ts';
import { BudgetPriceError } from '../../src/budget/budget.ts';
import type { Model, ModelRequest } from '../../src/model/model.ts';
import type { ModelPrice } from '../../src/model/prices.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { readRunStatus } from '../../src/runtime/run-status.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import type { RunStore } from '../../src/store/store.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { toolUseProblems } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const STORES: Array<[string, () => RunStore]> = [
  ['MemoryStore', () => new MemoryStore()],
  ['FileStore', () => new FileStore(path.join(tempDir(), '.durable-agent'))],
];

const usage = (input: number, output: number) => ({ input, output, cacheRead: 0, cacheWrite: 0 });
/** Three tool turns and an answer, each reply 1,000 input and 100 output tokens. */
const SCRIPT: ModelReply[] = [
  { ...toolUseReply([{ id: 't1', name: 'lookup', input: { q: 'a' } }, { id: 't2', name: 'send_email', input: { to: 'x' } }]), usage: usage(1000, 100) },
  { ...toolUseReply([{ id: 't3', name: 'lookup', input: { q: 'b' } }]), usage: usage(1000, 100) },
  { ...toolUseReply([{ id: 't4', name: 'lookup', input: { q: 'c' } }]), usage: usage(1000, 100) },
  { ...endTurnReply('all done'), usage: usage(1000, 100) },
];

/** $1 per million input tokens, $10 per million output: each reply above costs $0.002. */
const PRICE: ModelPrice = { input: 1, output: 10, cacheRead: 0.1, cacheWrite: 1.25 };

function countingModel(price?: ModelPrice) {
  const inner = scriptedModel(SCRIPT);
  const requests: Message[][] = [];
  const model: Model = {
    name: 'counted-scripted',
    ...(price ? { price } : {}),
    async createMessage(request: ModelRequest) {
      requests.push(structuredClone(request.messages) as Message[]);
      return inner.createMessage(request);
    },
  };
  return { model, requests };
}

async function recordsOf(store: RunStore) {
  return (await store.load()).records.map((stored) => stored.record);
}

describe.each(STORES)('budgets (%s)', (_name, newStore) => {
  it('a token budget reached mid-turn stops before the next model call, every tool_use answered; exit state stoppedAtBudget', async () => {
    const store = newStore();
    const { tools, counter } = countingTools();
    const { model, requests } = countingModel();
    const result = await startRun({ store, model, tools, task: 'go', budget: { maxTotalTokens: 2000 } });
    // Reply 1 (1,100 tokens) is under the budget; reply 2 brings it to 2,200: its tool runs, then the run stops.
    expect(result.status).toBe('stoppedAtBudget');
    expect(result.budgetStop).toEqual({ budget: 'tokens', spent: 2200, limit: 2000 });
    expect(result.budget).toEqual({ maxTotalTokens: 2000 });
    expect(requests).toHaveLength(2);
    expect(counter.of('t3')).toBe(1);
    const records = await recordsOf(store);
    const last = records.at(-1)!;
    expect(last).toMatchObject({ event: 'BUDGET_REACHED', state: 'stoppedAtBudget', budgetStop: { budget: 'tokens', spent: 2200, limit: 2000 } });
    // Checkpoint B came first: the stop leaves no tool_use without its tool_result.
    expect(records.at(-2)).toMatchObject({ event: 'CLOSE_TURN', state: 'closed' });
    const view = foldJournal(store.location, await store.load());
    expect(toolUseProblems(view.context.messages)).toEqual([]);
    expect((await store.load()).header.version).toBe(3);
  });

  it('a resume with the same budget (or none) stops again at once: no model call, nothing written', async () => {
    const store = newStore();
    const { tools } = countingTools();
    const first = countingModel();
    await startRun({ store, model: first.model, tools, task: 'go', budget: { maxTotalTokens: 2000 } });
    const before = await recordsOf(store);
    for (const budget of [undefined, { maxTotalTokens: 2000 }]) {
      const again = countingModel();
      const result = await resumeRun({ store, model: again.model, tools, ...(budget ? { budget } : {}) });
      expect(result.status).toBe('stoppedAtBudget');
      expect(result.budgetStop).toEqual({ budget: 'tokens', spent: 2200, limit: 2000 });
      expect(again.requests).toHaveLength(0);
    }
    expect(await recordsOf(store)).toEqual(before);
  });

  it('a resume with a larger budget makes exactly the next call, then the raised budget stays with the run', async () => {
    const store = newStore();
    const { tools, counter } = countingTools();
    await startRun({ store, model: countingModel().model, tools, task: 'go', budget: { maxTotalTokens: 2000 } });
    const second = countingModel();
    const raised = await resumeRun({ store, model: second.model, tools, budget: { maxTotalTokens: 3000 } });
    // One more call (reply 3, to 3,300 tokens), its tool, then the raised budget stops it again.
    expect(second.requests).toHaveLength(1);
    expect(second.requests[0]!.filter((m) => m.role === 'assistant')).toHaveLength(2);
    expect(raised).toMatchObject({ status: 'stoppedAtBudget', budgetStop: { budget: 'tokens', spent: 3300, limit: 3000 } });
    expect(counter.of('t4')).toBe(1);
    const reopen = (await recordsOf(store)).find((record) => record.event === 'REOPEN')!;
    expect(reopen).toMatchObject({ budget: { maxTotalTokens: 3000 }, budgetStop: null, note: { reopened: { previousState: 'stoppedAtBudget' } } });
    // A plain resume keeps the raised budget: it stops at once.
    const plain = countingModel();
    expect((await resumeRun({ store, model: plain.model, tools })).budgetStop).toEqual({ budget: 'tokens', spent: 3300, limit: 3000 });
    expect(plain.requests).toHaveLength(0);
    const last = countingModel();
    const done = await resumeRun({ store, model: last.model, tools, budget: { maxTotalTokens: 10_000 } });
    expect(done).toMatchObject({ status: 'done', text: 'all done' });
    expect(last.requests).toHaveLength(1);
    for (const id of ['t1', 't2', 't3', 't4']) expect(counter.of(id), id).toBe(1);
  });

  it('a cost budget counts each reply at its price, checked before each call', async () => {
    const store = newStore();
    const { tools } = countingTools();
    const { model, requests } = countingModel(PRICE);
    const result = await startRun({ store, model, tools, task: 'go', budget: { maxCostUsd: 0.005 } });
    // $0.002 a reply: after three replies ($0.006) the budget is reached.
    expect(requests).toHaveLength(3);
    expect(result.status).toBe('stoppedAtBudget');
    expect(result.budgetStop?.budget).toBe('cost');
    expect(result.budgetStop?.spent).toBeCloseTo(0.006, 10);
    expect(result.costUsd).toBeCloseTo(0.006, 10);
    const status = await readRunStatus(store);
    expect(status.budget).toEqual({ maxCostUsd: 0.005 });
    expect(status.costUsd).toBeCloseTo(0.006, 10);
    expect(status.budgetStop?.budget).toBe('cost');
  });

  it('a cost budget for a model without a price is refused before anything is written', async () => {
    const store = newStore();
    const { tools } = countingTools();
    const { model } = countingModel();
    const refusal = await startRun({ store, model, tools, task: 'go', budget: { maxCostUsd: 1 } }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(BudgetPriceError);
    expect((refusal as Error).message).toContain('counted-scripted has none in the price table');
    expect((refusal as Error).message).toContain('--max-total-tokens');
    expect(await store.exists()).toBe(false);
  });

  it('a resume adds a cost budget to a run that had none, priced from what it used; lowering one stops it at once', async () => {
    const store = newStore();
    const { tools } = countingTools();
    const first = await startRun({ store, model: countingModel(PRICE).model, tools, task: 'go', maxTurns: 1 });
    expect(first.status).toBe('stoppedAtMaxTurns');
    // 2 replies (one held at MAX_TURNS) = $0.004 so far.
    const second = countingModel(PRICE);
    const result = await resumeRun({ store, model: second.model, tools, maxTurns: 10, budget: { maxCostUsd: 0.003 } });
    expect(second.requests).toHaveLength(0);
    expect(result.status).toBe('stoppedAtBudget');
    expect(result.budgetStop?.spent).toBeCloseTo(0.004, 10);
  });

  it('refuses budgets out of range, nothing written', async () => {
    const store = newStore();
    const { tools } = countingTools();
    for (const budget of [{ maxCostUsd: 0 }, { maxCostUsd: Number.POSITIVE_INFINITY }, { maxTotalTokens: 0 }, { maxTotalTokens: 1.5 }]) {
      await expect(startRun({ store, model: countingModel(PRICE).model, tools, task: 'go', budget })).rejects.toThrow(RangeError);
    }
    expect(await store.exists()).toBe(false);
  });

  it('a crash after the REOPEN of a raised budget resumes with the raised budget (a plain resume)', async () => {
    const store = newStore();
    const { tools, counter } = countingTools();
    await startRun({ store, model: countingModel().model, tools, task: 'go', budget: { maxTotalTokens: 2000 } });
    const crashing = countingModel();
    const crash = await resumeRun({ store, model: crashing.model, tools, budget: { maxTotalTokens: 3000 }, crashAfter: 'after-save-reopen:1' }).catch((e: unknown) => e);
    expect(crash).toBeInstanceOf(SimulatedCrash);
    expect(crashing.requests).toHaveLength(0);
    const events: RunEvent[] = [];
    const plain = countingModel();
    const result = await resumeRun({ store, model: plain.model, tools, observer: (event) => events.push(event) });
    expect(plain.requests).toHaveLength(1);
    expect(result.budgetStop).toEqual({ budget: 'tokens', spent: 3300, limit: 3000 });
    expect(counter.of('t4')).toBe(1);
    const saved = events.filter((event) => event.type === 'saved').at(-1);
    expect(saved).toMatchObject({ budget: { maxTotalTokens: 3000 }, budgetStop: { budget: 'tokens', spent: 3300, limit: 3000 } });
  });
});

describe('runs without a budget', () => {
  it('write the journal they always wrote: no budget fields, version 1', async () => {
    const store = new MemoryStore();
    const { tools } = countingTools();
    const result = await startRun({ store, model: countingModel(PRICE).model, tools, task: 'go' });
    expect(result.status).toBe('done');
    expect(result).not.toHaveProperty('budget');
    const loaded = await store.load();
    expect(loaded.header.version).toBe(1);
    for (const { record } of loaded.records) {
      expect(record).not.toHaveProperty('budget');
      expect(record).not.toHaveProperty('costUsd');
      expect(record).not.toHaveProperty('budgetStop');
    }
  });
});
