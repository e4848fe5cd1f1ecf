/**
 * Tool result clearing (clear_tool_uses_20250919) on the real model path: the real SDK against
 * the fake Messages API, which applies the edit (the oldest tool results replaced by a
 * placeholder, reported in applied_edits, the input counted as cleared) before its window and
 * compaction. The request carries the edit with its beta, before compaction's; a run that passes
 * the window without it finishes with it; the journal keeps every tool result whole.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ModelReply } from '../../machines/agent-loop.types.ts';
import { anthropicModel } from '../../src/model/anthropic-model.ts';
import type { Model } from '../../src/model/model.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { FakeAnthropic, type FakeOptions, type ReceivedRequest } from '../helpers/fake-anthropic.ts';
import { toolUseProblems } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
const WINDOW = 20_000;
const LONG = 240_000;

const pageText = (n: number) => `page ${n}: ${'lorem ipsum dolor sit amet '.repeat(76)}`.slice(0, 2048);

/** A read-only tool whose result is 2 KB, different each turn. */
const page = defineTool<{ n: number }>({
  name: 'read_page',
  description: 'reads page n of a long document',
  inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
  readOnly: true,
  run: ({ n }) => pageText(n),
});

/** A small tool the model keeps an eye on: its results are never to be cleared (exclude_tools). */
const plan = defineTool<Record<string, never>>({
  name: 'read_plan',
  description: 'reads the plan',
  inputSchema: { type: 'object', properties: {} },
  readOnly: true,
  run: () => 'the plan: read every page, then say so',
});

function store(dir: string): FileStore {
  return new FileStore(path.join(dir, '.durable-agent'));
}

function pageReply(n: number): ModelReply {
  return toolUseReply([{ id: `toolu_${n}`, name: 'read_page', input: { n } }], `Reading page ${n}.`);
}

/** A tool call a turn until `turns`, then the answer; the turn is taken from the last tool_result sent. */
function script(turns: number) {
  let lastTurn = 0;
  return (request: ReceivedRequest) => {
    const ids = request.body.messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content.filter((b) => b.type === 'tool_result').map((b) => String(b.tool_use_id))));
    const last = ids.length ? Number(ids[ids.length - 1]!.slice('toolu_'.length)) : lastTurn;
    if (last >= turns) return { reply: endTurnReply(`Read all ${turns} pages.`) };
    lastTurn = last + 1;
    return { reply: pageReply(last + 1) };
  };
}

async function withFake<T>(turns: number, options: FakeOptions, body: (fake: FakeAnthropic, url: string) => Promise<T>): Promise<T> {
  const fake = new FakeAnthropic(script(turns), options);
  const url = await fake.start();
  try {
    return await body(fake, url);
  } finally {
    await fake.stop();
  }
}

const edits = (request: ReceivedRequest) => (request.body as unknown as { context_management?: { edits: Array<{ type: string }> } }).context_management?.edits;
const betas = (request: ReceivedRequest) => String(request.headers['anthropic-beta'] ?? '').split(',');

/** Every tool result the journal holds (its ledger entries), by tool_use_id, the compacted-away ones included. */
async function journalResults(dir: string): Promise<Map<string, unknown>> {
  const { records } = await store(dir).load();
  const results = new Map<string, unknown>();
  for (const stored of records) for (const outcome of stored.record.results?.add ?? []) results.set(outcome.tool_use_id, outcome.content);
  return results;
}

describe.concurrent('clearing old tool results (clear_tool_uses_20250919), the real SDK against an API that clears', () => {
  const TURNS = 150;

  it(`with --compact off, ${TURNS} turns of 2 KB results pass a ${WINDOW}-token window only with clearing; the journal keeps every result whole`, async () => {
    await withFake(TURNS, { contextWindow: WINDOW, modelInfo: { max_input_tokens: WINDOW, compaction: true } }, async (fake, url) => {
      const model = anthropicModel({ model: 'claude-clearing', apiKey: KEY, baseURL: url, maxRetries: 0 });
      const plainDir = tempDir();
      const plain = await startRun({ store: store(plainDir), model, tools: [page], task: 'Read the whole document.', maxTurns: TURNS + 1, compaction: { mode: 'off' } });
      expect(plain).toMatchObject({ status: 'failed', failure: { reason: 'context_window_exceeded' } });
      expect(fake.clearings).toEqual([]);
      const unclearedRequests = fake.requests.length;
      fake.respondWith(script(TURNS));

      const dir = tempDir();
      const clearToolUses = { triggerTokens: 8_000, keep: 2, clearAtLeast: 2_000 };
      const result = await startRun({ store: store(dir), model, tools: [page], task: 'Read the whole document.', maxTurns: TURNS + 1, compaction: { mode: 'off' }, clearToolUses });
      expect(result.failure).toBeNull();
      expect(result).toMatchObject({ status: 'done', turn: TURNS, text: `Read all ${TURNS} pages.` });
      const header = (await store(dir).load()).header;
      expect(header).toMatchObject({ version: 3, clearToolUses: { triggerTokens: 8_000, keep: 2, clearAtLeast: 2_000 } });
      expect(header).not.toHaveProperty('compaction');

      const requests = fake.requests.slice(unclearedRequests);
      for (const request of requests) {
        expect(betas(request)).toEqual(['context-management-2025-06-27']);
        expect(edits(request)).toEqual([
          { type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 8_000 }, keep: { type: 'tool_uses', value: 2 }, clear_at_least: { type: 'input_tokens', value: 2_000 } },
        ]);
      }
      // The server cleared, again and again, and read no more than its window; the process sent
      // every result whole each time (nothing is dropped on our side)…
      expect(fake.clearings.length).toBeGreaterThan(TURNS / 2);
      for (const clearing of fake.clearings) expect(clearing.cleared_input_tokens).toBeGreaterThanOrEqual(2_000);
      expect(Math.max(...fake.inputTokens.slice(unclearedRequests))).toBeLessThanOrEqual(WINDOW);
      const last = requests[requests.length - 1]!;
      const sent = last.body.messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content.filter((b) => b.type === 'tool_result')));
      expect(sent).toHaveLength(TURNS);
      expect(sent.every((b, i) => b.content === pageText(i + 1))).toBe(true);
      expect(toolUseProblems(last.body.messages)).toEqual([]);
      // …and the journal holds each of the results as the tool returned it.
      const results = await journalResults(dir);
      expect(results.size).toBe(TURNS);
      for (let n = 1; n <= TURNS; n++) expect(results.get(`toolu_${n}`)).toBe(pageText(n));
    });
  }, LONG);

  it('with server compaction (the default) and clearing at its default trigger (half the window): both edits, clearing first, and far fewer compactions', async () => {
    const turns = 400;
    const compactions: number[] = [];
    for (const clearToolUses of [undefined, true] as const) {
      await withFake(turns, { contextWindow: WINDOW, modelInfo: { max_input_tokens: WINDOW, compaction: true } }, async (fake, url) => {
        const dir = tempDir();
        const model = anthropicModel({ model: 'claude-compacting', apiKey: KEY, baseURL: url, maxRetries: 0 });
        const result = await startRun({ store: store(dir), model, tools: [page, plan], task: 'Read the whole document.', maxTurns: turns + 1, ...(clearToolUses ? { clearToolUses } : {}) });
        expect(result).toMatchObject({ status: 'done', turn: turns });
        expect(Math.max(...fake.inputTokens)).toBeLessThanOrEqual(WINDOW);
        compactions.push(fake.compactionsIssued);
        if (!clearToolUses) {
          for (const request of fake.requests) expect(edits(request)!.map((e) => e.type)).toEqual(['compact_20260112']);
          return;
        }
        expect((await store(dir).load()).header).toMatchObject({ compaction: { mode: 'server', contextWindow: WINDOW }, clearToolUses: { triggerTokens: WINDOW / 2, keep: 3 } });
        for (const request of fake.requests) {
          expect(betas(request)).toEqual(['context-management-2025-06-27', 'compact-2026-01-12']);
          expect(edits(request)).toEqual([
            { type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: WINDOW / 2 }, keep: { type: 'tool_uses', value: 3 } },
            { type: 'compact_20260112', trigger: { type: 'input_tokens', value: 16_000 }, pause_after_compaction: true },
          ]);
        }
        expect(fake.clearings.length).toBeGreaterThan(10);
        const results = await journalResults(dir);
        expect(results.size).toBe(turns);
        for (let n = 1; n <= turns; n++) expect(results.get(`toolu_${n}`)).toBe(pageText(n));
      });
    }
    const [without, withClearing] = compactions as [number, number];
    expect(without).toBeGreaterThan(10);
    expect(withClearing * 2).toBeLessThan(without);
  }, LONG);
});

describe('clearing settings: pinned with the run', () => {
  const TURNS = 6;

  it('a resume keeps the pinned clearing, may change its numbers (not pinned anew), and can neither turn it on nor off', async () => {
    await withFake(TURNS, { modelInfo: { max_input_tokens: 200_000, compaction: false } }, async (fake, url) => {
      const model = anthropicModel({ model: 'claude-clearing', apiKey: KEY, baseURL: url, maxRetries: 0 });
      const dir = tempDir();
      const first = await startRun({ store: store(dir), model, tools: [page, plan], task: 't', maxTurns: 2, compaction: { mode: 'off' }, clearToolUses: { excludeTools: ['read_plan'], clearToolInputs: true } });
      expect(first.status).toBe('stoppedAtMaxTurns');
      const pinned = { triggerTokens: 100_000, keep: 3, excludeTools: ['read_plan'], clearToolInputs: true };
      expect((await store(dir).load()).header).toMatchObject({ version: 3, clearToolUses: pinned });
      expect(edits(fake.requests[0]!)).toEqual([
        { type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 100_000 }, keep: { type: 'tool_uses', value: 3 }, exclude_tools: ['read_plan'], clear_tool_inputs: true },
      ]);

      const journal = path.join(dir, '.durable-agent', 'journal.jsonl');
      const before = fs.readFileSync(journal);
      const off = await resumeRun({ store: store(dir), model, tools: [page, plan], maxTurns: 3, clearToolUses: false }).catch((e: unknown) => e);
      expect(off).toMatchObject({ name: 'CompactionSettingsError' });
      expect((off as Error).message).toContain('a resume cannot turn that off');
      expect(fs.readFileSync(journal)).toEqual(before);

      const asked = fake.requests.length;
      const plainResume = await resumeRun({ store: store(dir), model, tools: [page, plan], maxTurns: 3 });
      expect(plainResume.status).toBe('stoppedAtMaxTurns');
      expect(edits(fake.requests[asked]!)).toEqual(edits(fake.requests[0]!));

      const tuned = await resumeRun({ store: store(dir), model, tools: [page, plan], maxTurns: TURNS + 1, clearToolUses: { keep: 1, triggerTokens: 5_000 } });
      expect(tuned.status).toBe('done');
      expect(edits(fake.requests[fake.requests.length - 1]!)).toEqual([
        { type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 5_000 }, keep: { type: 'tool_uses', value: 1 }, exclude_tools: ['read_plan'], clear_tool_inputs: true },
      ]);
      expect((await store(dir).load()).header.clearToolUses).toEqual(pinned);

      const without = tempDir();
      await startRun({ store: store(without), model, tools: [page], task: 't', maxTurns: 1, compaction: { mode: 'off' } });
      const before2 = fs.readFileSync(path.join(without, '.durable-agent', 'journal.jsonl'));
      const on = await resumeRun({ store: store(without), model, tools: [page], maxTurns: 3, clearToolUses: true }).catch((e: unknown) => e);
      expect(on).toMatchObject({ name: 'CompactionSettingsError' });
      expect((on as Error).message).toContain('was started without clearing tool results; a resume cannot turn it on');
      expect(fs.readFileSync(path.join(without, '.durable-agent', 'journal.jsonl'))).toEqual(before2);
    });
  });

  it('is refused, before anything is written, for a model that is not Claude through the API, for a tool the run does not offer, and out of range', async () => {
    const dir = tempDir();
    const model = scriptedModel([endTurnReply('x')]);
    await expect(startRun({ store: store(dir), model, tools: [page], task: 't', clearToolUses: true })).rejects.toThrow('is done by the Anthropic API; scripted');
    const claude = anthropicModel({ model: 'claude-clearing', apiKey: KEY, baseURL: 'http://127.0.0.1:9', maxRetries: 0 });
    await expect(startRun({ store: store(dir), model: claude, tools: [page], task: 't', compaction: { mode: 'off' }, clearToolUses: { triggerTokens: 5_000, excludeTools: ['read_plna'] } })).rejects.toThrow(
      'names read_plna, which the run does not offer',
    );
    await expect(startRun({ store: store(dir), model: claude, tools: [page], task: 't', compaction: { mode: 'off' }, clearToolUses: { keep: -1 } })).rejects.toThrow('clearToolUses.keep must be a whole number from 0 to 10000');
    expect(fs.existsSync(path.join(dir, '.durable-agent', 'journal.jsonl'))).toBe(false);
  });

  it("a model's own price survives the context edits' wrappers: a cost budget stops a server-compacting, clearing run of a model of your own", async () => {
    const scripted = scriptedModel([pageReply(1), pageReply(2), pageReply(3), endTurnReply('done')]);
    const seen: unknown[] = [];
    const mine: Model = {
      name: 'my-gateway-model',
      price: { input: 1_000, output: 1_000, cacheRead: 1_000, cacheWrite: 1_000 },
      traits: async () => ({ contextWindow: 100_000, serverCompaction: true }),
      createMessage: (request) => (seen.push({ compaction: request.serverCompaction, clearing: request.clearToolUses }), scripted.createMessage(request)),
    };
    const dir = tempDir();
    const result = await startRun({ store: store(dir), model: mine, tools: [page], task: 't', maxTurns: 5, budget: { maxCostUsd: 0.01 }, clearToolUses: true });
    expect(seen[0]).toEqual({ compaction: { triggerTokens: 80_000 }, clearing: { triggerTokens: 50_000, keep: 3 } });
    expect(result.status).toBe('stoppedAtBudget');
    expect(seen).toHaveLength(1);
  });

  it('a summary request of client compaction carries no clearing (the summary is written from the results themselves)', async () => {
    const summaries: ReceivedRequest[] = [];
    const fake = new FakeAnthropic((request) => {
      const body = request.body as ReceivedRequest['body'] & { tool_choice?: { type: string } };
      if (body.tool_choice?.type === 'none') {
        summaries.push(request);
        return { reply: endTurnReply('Pages were read; keep reading.') };
      }
      return script(40)(request);
    }, { contextWindow: WINDOW, modelInfo: { max_input_tokens: WINDOW, compaction: false } });
    const url = await fake.start();
    try {
      const dir = tempDir();
      const model = anthropicModel({ model: 'claude-plain', apiKey: KEY, baseURL: url, maxRetries: 0 });
      const result = await startRun({ store: store(dir), model, tools: [page], task: 'Read the whole document.', maxTurns: 41, clearToolUses: { triggerTokens: 30_000 } });
      expect(result).toMatchObject({ status: 'done', turn: 40 });
      expect((await store(dir).load()).header).toMatchObject({ compaction: { mode: 'client' }, clearToolUses: { triggerTokens: 30_000 } });
      expect(summaries.length).toBeGreaterThan(0);
      for (const request of fake.requests) expect(request.body).toHaveProperty(summaries.includes(request) ? 'messages' : 'context_management');
      for (const request of summaries) expect(request.body).not.toHaveProperty('context_management');
    } finally {
      await fake.stop();
    }
  });
});
