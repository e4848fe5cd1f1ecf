/**
 * Long runs past the context window (issue 14): 3,000 turns with 2 KB results, on a real file
 * store, with server compaction (the real SDK against the fake Messages API, which emulates the
 * window and compact_20260112) and with client compaction (the scripted model, and the fake
 * API); `off` fails on the context window as before.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ContentBlock, Message, ModelReply } from '../../machines/agent-loop.types.ts';
import { SUMMARY_HEADING } from '../../src/compaction/context-compaction.ts';
import { anthropicModel } from '../../src/model/anthropic-model.ts';
import { endTurnReply, scriptedModel, type ScriptedStep, toolUseReply } from '../../src/model/scripted-model.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { FakeAnthropic, type FakeOptions, type ReceivedRequest } from '../helpers/fake-anthropic.ts';
import { toolUseProblems } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { orphanResults } from '../helpers/orphan-results.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
const TURNS = 3_000;
/** Small enough that 3,000 turns of 2 KB results need it compacted a hundred times. */
const WINDOW = 20_000;
const LONG = 240_000;

/** A read-only tool whose result is 2 KB, different each turn. */
const page = defineTool<{ n: number }>({
  name: 'read_page',
  description: 'reads page n of a long document',
  inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
  readOnly: true,
  run: ({ n }) => `page ${n}: ${'lorem ipsum dolor sit amet '.repeat(76)}`.slice(0, 2048),
});

function store(dir: string): FileStore {
  return new FileStore(path.join(dir, '.durable-agent'));
}

function pageReply(n: number): ModelReply {
  return toolUseReply([{ id: `toolu_${n}`, name: 'read_page', input: { n } }], `Reading page ${n}.`);
}

/**
 * The fake API's script: a tool call a turn until TURNS, then the answer; a request for a
 * summary (client compaction: no tool may be called) gets one. The turn is taken from the last
 * tool_result sent, so a request after a compaction, which lacks the older turns, continues.
 */
function longScript(summaries: { count: number }) {
  let lastTurn = 0;
  return (request: ReceivedRequest) => {
    const body = request.body as ReceivedRequest['body'] & { tool_choice?: { type: string } };
    if (body.tool_choice?.type === 'none') {
      summaries.count += 1;
      return { reply: endTurnReply(`The document was read up to page ${lastTurn - 1}; keep reading.`) };
    }
    const ids = body.messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content.filter((b) => b.type === 'tool_result').map((b) => String(b.tool_use_id))));
    // No tool_result in the request: the server compacted right after the last one was sent.
    const last = ids.length ? Number(ids[ids.length - 1]!.slice('toolu_'.length)) : lastTurn;
    if (last >= TURNS) return { reply: endTurnReply(`Read all ${TURNS} pages.`) };
    lastTurn = last + 1;
    return { reply: pageReply(last + 1) };
  };
}

async function withFake<T>(options: FakeOptions, summaries: { count: number }, body: (fake: FakeAnthropic, url: string) => Promise<T>): Promise<T> {
  const fake = new FakeAnthropic(longScript(summaries), options);
  const url = await fake.start();
  try {
    return await body(fake, url);
  } finally {
    await fake.stop();
  }
}

async function headerOf(dir: string): Promise<Record<string, unknown>> {
  return (await store(dir).load()).header as unknown as Record<string, unknown>;
}

/** Every message any record of the journal ever held (the compacted-away ones included). */
async function journalMessages(dir: string): Promise<Message[]> {
  const { records } = await store(dir).load();
  return records.flatMap((stored) => (stored.record.messages?.add ?? []) as Message[]);
}

// The long runs wait on fsync and HTTP more than on the CPU: side by side, they take the time of the longest.
describe.concurrent('past the context window: server compaction (the real SDK against an API that compacts), client compaction', () => {
  it(
    `finishes ${TURNS} turns past a ${WINDOW}-token window by default for a model that supports it; every compaction block goes back verbatim`,
    async () => {
      const summaries = { count: 0 };
      await withFake({ contextWindow: WINDOW, modelInfo: { max_input_tokens: WINDOW, compaction: true } }, summaries, async (fake, url) => {
        const dir = tempDir();
        const model = anthropicModel({ model: 'claude-compacting', apiKey: KEY, baseURL: url, maxRetries: 0 });
        const result = await startRun({ store: store(dir), model, tools: [page], task: 'Read the whole document.', maxTurns: TURNS + 1 });
        expect(result.failure).toBeNull();
        expect(result).toMatchObject({ status: 'done', turn: TURNS, text: `Read all ${TURNS} pages.` });
        expect(fake.modelLookups).toEqual(['claude-compacting']);
        expect(await headerOf(dir)).toMatchObject({ version: 3, compaction: { mode: 'server', contextWindow: WINDOW, triggerRatio: 0.8 } });
        expect(fake.compactionsIssued).toBeGreaterThan(50);
        // Each request sends back the last block only (what came before is dropped), and it is checked.
        expect(fake.compactionBlocksVerified).toBeGreaterThan(TURNS / 2);
        expect(Math.max(...fake.inputTokens)).toBeLessThanOrEqual(WINDOW);
        // Every request with the compaction edit and its beta header; none with more than one compaction block,
        // and that block first: what the server no longer reads is not sent (nor kept in memory).
        for (const request of fake.requests) {
          expect(request.headers['anthropic-beta']).toContain('compact-2026-01-12');
          expect((request.body as unknown as { context_management: unknown }).context_management).toEqual({
            edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 16_000 }, pause_after_compaction: true }],
          });
          const blocks = request.body.messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content)).filter((b) => b.type === 'compaction');
          expect(blocks.length).toBeLessThanOrEqual(1);
          if (blocks.length) expect((request.body.messages[0]!.content as ContentBlock[])[0]!.type).toBe('compaction');
        }
        expect(summaries.count).toBe(0);
        // The journal keeps every message, compacted away or not; the folded context only what the server reads.
        const all = await journalMessages(dir);
        expect(all.filter((m) => m.role === 'assistant' && JSON.stringify(m.content).includes('"tool_use"'))).toHaveLength(TURNS);
        const view = foldJournal(dir, await store(dir).load());
        expect(view.context.messages.length).toBeLessThan(80);
        expect(view.context.compacted).toMatchObject({ times: fake.compactionsIssued });
        expect(toolUseProblems(view.context.messages)).toEqual([]);
        expect(orphanResults(view.context.messages)).toEqual([]);
      });
    },
    LONG,
  );

  it('with --compact off the same run fails on the context window, as before: a failed run (exit 6), not an outage', async () => {
    await withFake({ contextWindow: WINDOW, modelInfo: { max_input_tokens: WINDOW, compaction: true } }, { count: 0 }, async (fake, url) => {
      const dir = tempDir();
      const model = anthropicModel({ model: 'claude-compacting', apiKey: KEY, baseURL: url, maxRetries: 0 });
      const result = await startRun({ store: store(dir), model, tools: [page], task: 'Read the whole document.', maxTurns: TURNS + 1, compaction: { mode: 'off' } });
      expect(result.status).toBe('failed');
      expect(result.failure).toMatchObject({ reason: 'context_window_exceeded', retryable: false });
      expect(result.turn).toBeGreaterThan(20);
      expect(result.turn).toBeLessThan(60);
      expect(fake.compactionsIssued).toBe(0);
      expect(fake.modelLookups).toEqual([]);
      expect(await headerOf(dir)).toMatchObject({ version: 1 });
      expect(await headerOf(dir)).not.toHaveProperty('compaction');
      for (const request of fake.requests) expect(request.body).not.toHaveProperty('context_management');
    });
  });

  it(
    `finishes ${TURNS} turns with the fake API of a model without server compaction (the default there: client)`,
    async () => {
      const summaries = { count: 0 };
      await withFake({ contextWindow: WINDOW, modelInfo: { max_input_tokens: WINDOW, compaction: false } }, summaries, async (fake, url) => {
        const dir = tempDir();
        const model = anthropicModel({ model: 'claude-plain', apiKey: KEY, baseURL: url, maxRetries: 0 });
        const result = await startRun({ store: store(dir), model, tools: [page], task: 'Read the whole document.', maxTurns: TURNS + 1 });
        expect(result).toMatchObject({ status: 'done', turn: TURNS });
        expect(await headerOf(dir)).toMatchObject({ version: 3, compaction: { mode: 'client', contextWindow: WINDOW } });
        expect(summaries.count).toBeGreaterThan(50);
        expect(fake.compactionsIssued).toBe(0);
        expect(Math.max(...fake.inputTokens)).toBeLessThanOrEqual(WINDOW);
        for (const request of fake.requests) {
          expect(request.body).not.toHaveProperty('context_management');
          // A tool_use is never sent without its tool_result (nor a tool_result without its tool_use).
          expect(toolUseProblems(request.body.messages)).toEqual([]);
          expect(orphanResults(request.body.messages)).toEqual([]);
        }
        const view = foldJournal(dir, await store(dir).load());
        expect(view.context.compacted?.times).toBe(summaries.count);
        expect(JSON.stringify(view.context.messages[0])).toContain(SUMMARY_HEADING);
      });
    },
    LONG,
  );

  it(
    `finishes ${TURNS} turns with the scripted model given a window; off fails on it (model_context_window_exceeded)`,
    async () => {
      const steps: ScriptedStep[] = Array.from({ length: TURNS }, (_, i) => pageReply(i + 1));
      steps.push(endTurnReply(`Read all ${TURNS} pages.`));
      const dir = tempDir();
      const model = scriptedModel(steps, { contextWindow: WINDOW });
      const result = await startRun({ store: store(dir), model, tools: [page], task: 'Read the whole document.', maxTurns: TURNS + 1, compaction: { mode: 'client', contextWindow: WINDOW } });
      expect(result).toMatchObject({ status: 'done', turn: TURNS, text: `Read all ${TURNS} pages.` });
      const view = foldJournal(dir, await store(dir).load());
      expect(view.context.compacted!.times).toBeGreaterThan(50);
      expect(view.context.compacted!.replies + view.context.messages.filter((m) => m.role === 'assistant').length).toBe(TURNS + 1);

      const offDir = tempDir();
      const off = await startRun({ store: store(offDir), model, tools: [page], task: 'Read the whole document.', maxTurns: TURNS + 1 });
      expect(off).toMatchObject({ status: 'failed', failure: { reason: 'context_window_exceeded' } });
      expect(await headerOf(offDir)).not.toHaveProperty('compaction');
    },
    LONG,
  );
});


describe('a compaction block in the journal', () => {
  it('folds back byte for byte, nulls and key order included', async () => {
    const block = { type: 'compaction', content: 'summary', encrypted_content: null, signature: 'sig_1', tool_changes: null, extra: { b: 1, a: [null] } };
    const dir = tempDir();
    const reply: ModelReply = { content: [block], stop_reason: 'compaction', usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 } };
    const seen: Message[][] = [];
    const model = scriptedModel([reply, endTurnReply('done')]);
    const spy = { ...model, createMessage: async (request: Parameters<typeof model.createMessage>[0]) => (seen.push([...request.messages]), model.createMessage(request)) };
    // The scripted model counts the compaction message as a reply: the end comes second.
    const result = await startRun({ store: store(dir), model: spy, tools: [page], task: 't' });
    expect(result.status).toBe('done');
    expect(JSON.stringify((seen[1]![0]!.content as ContentBlock[])[0])).toBe(JSON.stringify(block));
    // The task is no longer sent: the API does not read what comes before the block.
    expect(seen[1]).toHaveLength(1);
    const view = foldJournal(dir, await store(dir).load());
    expect(JSON.stringify((view.context.messages[0]!.content as ContentBlock[])[0])).toBe(JSON.stringify(block));
    expect(view.context.compacted).toEqual({ times: 1, messages: 1, replies: 0 });
  });
});

describe('compaction settings', () => {
  it('a resume keeps the pinned mode and refuses another, before it changes anything', async () => {
    const dir = tempDir();
    const steps = [pageReply(1), pageReply(2), endTurnReply('done')];
    const first = await startRun({ store: store(dir), model: scriptedModel(steps), tools: [page], task: 't', maxTurns: 1, compaction: { mode: 'client', contextWindow: WINDOW } });
    expect(first.status).toBe('stoppedAtMaxTurns');
    const before = fs.readFileSync(path.join(dir, '.durable-agent', 'journal.jsonl'));
    const refused = await resumeRun({ store: store(dir), model: scriptedModel(steps), tools: [page], maxTurns: 5, compaction: { mode: 'off' } }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ name: 'CompactionSettingsError' });
    expect((refused as Error).message).toContain('was started with compaction client');
    expect(fs.readFileSync(path.join(dir, '.durable-agent', 'journal.jsonl'))).toEqual(before);
    const resumed = await resumeRun({ store: store(dir), model: scriptedModel(steps), tools: [page], maxTurns: 5 });
    expect(resumed.status).toBe('done');
  });

  it('a Models API that fails is not taken for one without compaction: the start is refused (nothing written) unless a retry gets the answer; a gateway without it (404) keeps the defaults', async () => {
    const start = (url: string, maxRetries: number, dir: string) =>
      startRun({ store: store(dir), model: anthropicModel({ model: 'claude-compacting', apiKey: KEY, baseURL: url, maxRetries }), tools: [page], task: 'Read the whole document.', maxTurns: 1 });
    const info = { max_input_tokens: WINDOW, compaction: true };

    await withFake({ modelInfo: info, modelLookupFailures: 1 }, { count: 0 }, async (fake, url) => {
      const dir = tempDir();
      const refused = await start(url, 0, dir).catch((e: unknown) => e);
      expect(refused).toMatchObject({ name: 'ModelLookupError', model: 'claude-compacting', status: 529 });
      expect((refused as Error).message).toContain('Nothing was started');
      expect((refused as Error).message).toContain('--compact off');
      expect((refused as Error).message).not.toContain(KEY);
      expect(fake.requests).toHaveLength(0);
      expect(fs.existsSync(path.join(dir, '.durable-agent'))).toBe(false);
      // The model asks again on the next start (a failed answer is not kept).
      const again = await start(url, 0, dir);
      expect(again.status).toBe('stoppedAtMaxTurns');
      expect(await headerOf(dir)).toMatchObject({ compaction: { mode: 'server', contextWindow: WINDOW } });
      expect(fake.modelLookups).toHaveLength(2);
    });

    await withFake({ modelInfo: info, modelLookupFailures: 1 }, { count: 0 }, async (fake, url) => {
      const dir = tempDir();
      const result = await start(url, 2, dir);
      expect(result.status).toBe('stoppedAtMaxTurns');
      expect(await headerOf(dir)).toMatchObject({ compaction: { mode: 'server', contextWindow: WINDOW } });
      expect(fake.modelLookups).toHaveLength(2);
    });

    await withFake({}, { count: 0 }, async (fake, url) => {
      const dir = tempDir();
      const result = await start(url, 0, dir);
      expect(result.status).toBe('stoppedAtMaxTurns');
      expect(await headerOf(dir)).not.toHaveProperty('compaction');
      expect(fake.modelLookups).toEqual(['claude-compacting']);
    });
  });

  it('client or server without a known window, and server for a model that is not Claude, are refused', async () => {
    const dir = tempDir();
    const model = scriptedModel([endTurnReply('x')]);
    await expect(startRun({ store: store(dir), model, tools: [page], task: 't', compaction: { mode: 'client' } })).rejects.toThrow('--context-window N');
    await expect(startRun({ store: store(dir), model, tools: [page], task: 't', compaction: { mode: 'server', contextWindow: WINDOW } })).rejects.toThrow('Server compaction needs a Claude model');
    await expect(startRun({ store: store(dir), model, tools: [page], task: 't', compaction: { triggerRatio: 2 } })).rejects.toThrow('triggerRatio must be from 0.1 to 0.95');
    expect(fs.existsSync(path.join(dir, '.durable-agent', 'journal.jsonl'))).toBe(false);
  });
});
