/**
 * The real CLI and SDK against the fake Messages API: `run --web-search --web-fetch
 * --code-execution` end to end, killed by a real SIGKILL around each new block type (after the
 * reply that carries it is counted, after it is recorded, before and after the next request) and
 * resumed by a plain `run --resume`: every server tool block goes back byte for byte (the fake
 * answers 400 to one altered or dropped), the code execution container is reused, the searches
 * and tokens are counted once per reply the API gave (a reply recorded is never counted again),
 * and the cost in US dollars, budget included, counts each search at $0.01.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentContext, ContentBlock, ModelReply } from '../../machines/agent-loop.types.ts';
import { costAt } from '../../src/model/prices.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { assistantTurns, FakeAnthropic, type ReceivedRequest } from '../helpers/fake-anthropic.ts';
import { isServerToolBlock, serverToolUse } from '../helpers/fake-server-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
const MODEL = 'claude-test-model';
const USAGE = { input: 1_000, output: 100, cacheRead: 0, cacheWrite: 0 };
const PRICE = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
const PRICE_FLAG = 'input=3,output=15,cache-read=0.3,cache-write=3.75';
const TOOLS = ['--web-search', '--web-search-max-uses', '3', '--web-fetch', '--code-execution'];

/**
 * Three replies, every block type among them: a search and code that runs long (the turn pauses,
 * the call open); the continuation (the code's encrypted result first), a fetch, a bash call and
 * a call of the run's list_files; a second search, a file made with the text editor, the answer.
 */
const SCRIPT: Array<() => ModelReply> = [
  () => ({ content: [{ type: 'text', text: 'Searching first.' }, serverToolUse('web_search', { query: 'durable agents' }), serverToolUse('code_execution', { code: 'crunch()' }, { paused: true })], stop_reason: 'pause_turn', usage: USAGE }),
  () => ({
    content: [serverToolUse('web_fetch', { url: 'https://example.com/notes' }), serverToolUse('bash_code_execution', { command: 'wc -l data.csv' }), { type: 'tool_use', id: 'toolu_files', name: 'list_files', input: {} }],
    stop_reason: 'tool_use',
    usage: USAGE,
  }),
  () => ({
    content: [serverToolUse('web_search', { query: 'more' }), serverToolUse('text_editor_code_execution', { command: 'create', path: 'report.md', file_text: '# Report' }), { type: 'text', text: 'Report made.' }],
    stop_reason: 'end_turn',
    usage: USAGE,
  }),
];

async function withFake<T>(body: (fake: FakeAnthropic, env: Record<string, string>) => Promise<T>): Promise<T> {
  const fake = new FakeAnthropic((request) => ({ reply: SCRIPT[Math.min(assistantTurns(request), SCRIPT.length - 1)]!() }));
  const url = await fake.start();
  try {
    return await body(fake, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url });
  } finally {
    await fake.stop();
  }
}

async function contextOf(dir: string): Promise<AgentContext> {
  const store = new FileStore(path.join(dir, '.durable-agent'));
  try {
    return foldJournal(store.location, await store.load()).context;
  } finally {
    store.close();
  }
}

const serverBlocksIn = (request: ReceivedRequest): ContentBlock[] =>
  request.body.messages.flatMap((m) => (m.role === 'assistant' && typeof m.content !== 'string' ? m.content.filter(isServerToolBlock) : []));

/** Every request answered (none refused), the container reused, every reply's tokens and searches counted once, priced. */
async function expectCountedOnce(dir: string, fake: FakeAnthropic): Promise<AgentContext> {
  expect(fake.answered).toHaveLength(fake.requests.length);
  const context = await contextOf(dir);
  const answered = fake.answered.length;
  expect(context.usage).toEqual({
    input: answered * USAGE.input,
    output: answered * USAGE.output,
    cacheRead: 0,
    cacheWrite: 0,
    webSearchRequests: fake.serverTools.webSearchesReported,
    webFetchRequests: fake.serverTools.webFetchesReported,
  });
  expect(context.costUsd).toBeCloseTo(costAt(PRICE, context.usage), 10);
  expect(context.costUsd! - costAt(PRICE, { ...context.usage, webSearchRequests: 0 })).toBeCloseTo(0.01 * fake.serverTools.webSearchesReported, 10);
  // The container of the code the run kept: every request after the one that made it names it.
  const kept = context.container!.id;
  expect(kept).toMatch(/^container_fake_\d+$/);
  const asked = fake.serverTools.containersAsked;
  expect(asked.at(-1)).toBe(kept);
  expect(asked.slice(asked.indexOf(kept))).toEqual(asked.slice(asked.indexOf(kept)).map(() => kept));
  // The last request sent back every server tool block of the conversation, each as the journal keeps it.
  const last = fake.requests.at(-1)!;
  const blocks = serverBlocksIn(last);
  expect(blocks.map((block) => block.type)).toEqual([
    'server_tool_use',
    'web_search_tool_result',
    'server_tool_use',
    'code_execution_tool_result',
    'server_tool_use',
    'web_fetch_tool_result',
    'server_tool_use',
    'bash_code_execution_tool_result',
  ]);
  const journal = fs.readFileSync(path.join(dir, '.durable-agent', 'journal.jsonl'), 'utf8');
  for (const block of blocks) expect(journal).toContain(JSON.stringify(block));
  expect(journal).not.toContain(KEY);
  return context;
}

describe('run --web-search --web-fetch --code-execution', () => {
  it('runs the server tools end to end: their definitions sent, blocks back byte for byte, the container reused, searches in the cost', async () => {
    await withFake(async (fake, env) => {
      const dir = tempDir();
      const run = await runCliAsync(['run', '--model', MODEL, ...TOOLS, '--price', PRICE_FLAG, '--max-cost-usd', '5', '--task', 'Research and report', '--plain'], { cwd: dir, env });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('[done] Report made.');
      expect(fake.requests).toHaveLength(3);
      const tools = (fake.requests[0]!.body as { tools: Array<Record<string, unknown>> }).tools;
      expect(tools.map((tool) => tool.name)).toEqual(['list_files', 'read_file', 'write_file', 'web_search', 'web_fetch', 'code_execution']);
      expect(tools.slice(3)).toEqual([
        { type: 'web_search_20260318', name: 'web_search', max_uses: 3 },
        { type: 'web_fetch_20260318', name: 'web_fetch' },
        { type: 'code_execution_20260521', name: 'code_execution' },
      ]);
      expect(fake.serverTools.containersAsked).toEqual([null, 'container_fake_001', 'container_fake_001']);
      // Request 2: the paused reply's 3 blocks; request 3: those and the continuation's 5.
      expect(fake.serverTools.blocksVerified).toBe(3 + 8);
      const context = await expectCountedOnce(dir, fake);
      expect(context.usage).toMatchObject({ webSearchRequests: 2, webFetchRequests: 1 });
      const status = await runCliAsync(['status'], { cwd: dir, env });
      expect(status.stdout).toContain('input 3000 · output 300 · cache read 0 · cache write 0 · web searches 2 · web fetches 1');

      const store = new FileStore(path.join(dir, '.durable-agent'));
      const { header } = await store.load();
      store.close();
      expect(header.request).toEqual({ serverTools: { webSearch: { maxUses: 3 }, webFetch: {}, codeExecution: {} } });
    });
  });

  it('refuses a resume that offers other server tools, and takes the pinned ones on a plain resume', async () => {
    await withFake(async (fake, env) => {
      const dir = tempDir();
      const killed = await runCliAsync(['run', '--model', MODEL, ...TOOLS, '--task', 'Research and report', '--plain'], { cwd: dir, env: { ...env, CRASH_AFTER: 'after-save-pause:1', CRASH_MODE: 'sigkill' } });
      expect(killed.signal, killed.stderr).toBe('SIGKILL');
      const journal = path.join(dir, '.durable-agent', 'journal.jsonl');
      const before = fs.readFileSync(journal);
      const refused = await runCliAsync(['run', '--resume', '--web-search'], { cwd: dir, env });
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain('started with the request options --web-search --web-search-max-uses 3 --web-fetch --code-execution');
      expect(refused.stderr).toContain('this resume changes server tools: --web-search --web-search-max-uses 3 --web-fetch --code-execution → --web-search');
      expect(fs.readFileSync(journal)).toEqual(before);
      expect(fake.requests).toHaveLength(1);
      const resumed = await runCliAsync(['run', '--resume', '--plain'], { cwd: dir, env });
      expect(resumed.code, resumed.stderr).toBe(0);
      for (const request of fake.requests) expect((request.body as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name)).toContain('code_execution');
    });
  });

  it('stops at a cost budget that only the searches reach (exit 8), and goes on with a larger one', async () => {
    await withFake(async (fake, env) => {
      const dir = tempDir();
      // Tokens at no cost: the one search of the first reply ($0.01) is what reaches the budget.
      const free = 'input=0,output=0,cache-read=0,cache-write=0';
      const stopped = await runCliAsync(['run', '--model', MODEL, ...TOOLS, '--price', free, '--max-cost-usd', '0.01', '--task', 'Research and report', '--plain'], { cwd: dir, env });
      expect(stopped.code, stopped.stderr).toBe(8);
      expect(`${stopped.stdout}${stopped.stderr}`).toContain('budget reached: $0.0100 of $0.0100');
      expect(fake.requests).toHaveLength(1);
      const resumed = await runCliAsync(['run', '--resume', '--max-cost-usd', '1', '--plain'], { cwd: dir, env });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect((await contextOf(dir)).costUsd).toBeCloseTo(0.02, 10);
    });
  });
});

describe('killed with SIGKILL around each server tool block and resumed', () => {
  it.each([
    ['after-model-reply:1', 'the paused reply (a search, code open) counted, not recorded: asked again'],
    ['after-save-pause:1', 'the paused reply recorded, before the request that continues it'],
    ['after-model-reply:2', "the continuation (the code's result, a fetch, bash) counted, not recorded"],
    ['after-save-a:1', 'the continuation recorded (checkpoint A), before list_files runs'],
    ['after-save-b:1', "list_files's result recorded (checkpoint B), before the next request"],
    ['after-model-reply:3', 'the last reply (a search, the text editor) counted, not recorded'],
  ])('%s: %s', async (label) => {
    await withFake(async (fake, env) => {
      const dir = tempDir();
      const killed = await runCliAsync(['run', '--model', MODEL, ...TOOLS, '--price', PRICE_FLAG, '--max-cost-usd', '5', '--task', 'Research and report', '--plain'], {
        cwd: dir,
        env: { ...env, CRASH_AFTER: label, CRASH_MODE: 'sigkill' },
      });
      expect(killed.signal, killed.stderr).toBe('SIGKILL');
      const resumed = await runCliAsync(['run', '--resume', '--plain'], { cwd: dir, env });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain('[done] Report made.');
      await expectCountedOnce(dir, fake);
      // A reply the journal holds is never asked for again; one only counted is (and both are paid for).
      const asked = Number(label.split(':')[1]);
      expect(fake.requests).toHaveLength(label.startsWith('after-model-reply') ? 4 : 3);
      if (label.startsWith('after-model-reply')) expect(assistantTurns(fake.requests[asked]!)).toBe(asked - 1);
    });
  });
});
