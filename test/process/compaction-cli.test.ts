/**
 * Compaction through the real CLI (`run`, the real SDK, the fake Messages API with a context
 * window): off fails on the window (exit 6), client and server finish; a real SIGKILL right
 * after each new crash point (the start of a client compaction, its summary's tokens, the
 * compacted context, a server compaction block) and a resume finish the run, the compaction
 * block going back to the API byte for byte from the journal.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { type CliRun, runCliAsync } from '../helpers/cli.ts';
import { FakeAnthropic, type FakeOptions, type ReceivedRequest } from '../helpers/fake-anthropic.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
const MODEL = 'claude-test-compaction';
const WINDOW = 20_000;
const TURNS = 40;

/** read_file of a 6 KB file a turn, TURNS times, then the answer; a summary request gets a summary. */
function script(requests: { summaries: number }) {
  let lastTurn = 0;
  return (request: ReceivedRequest) => {
    const body = request.body as ReceivedRequest['body'] & { tool_choice?: { type: string } };
    if (body.tool_choice?.type === 'none') {
      requests.summaries += 1;
      return { reply: endTurnReply(`big.txt was read ${lastTurn} times; read it again.`) };
    }
    const ids = body.messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content.filter((b) => b.type === 'tool_result').map((b) => String(b.tool_use_id))));
    const last = ids.length ? Number(ids[ids.length - 1]!.slice('toolu_'.length)) : lastTurn;
    if (last >= TURNS) return { reply: endTurnReply(`Read big.txt ${TURNS} times.`) };
    lastTurn = last + 1;
    return { reply: toolUseReply([{ id: `toolu_${last + 1}`, name: 'read_file', input: { path: 'big.txt' } }]) };
  };
}

async function withFake<T>(options: FakeOptions, body: (fake: FakeAnthropic, url: string, counts: { summaries: number }) => Promise<T>): Promise<T> {
  const counts = { summaries: 0 };
  const fake = new FakeAnthropic(script(counts), options);
  const url = await fake.start();
  try {
    return await body(fake, url, counts);
  } finally {
    await fake.stop();
  }
}

function project(): string {
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'big.txt'), 'All work and no play. '.repeat(280));
  return dir;
}

function run(dir: string, url: string, extra: string[], env: Record<string, string> = {}, maxTurns = TURNS + 5): Promise<CliRun> {
  const args = ['run', '--model', MODEL, '--dir', dir, '--max-turns', String(maxTurns), '--plain', '--max-retries', '0', ...extra];
  return runCliAsync(args, { cwd: dir, env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url, ...env } });
}

const TASK = ['--task', 'Read big.txt over and over.'];

describe('compaction through the CLI', () => {
  it('a Models API that keeps failing starts nothing (exit 3, what to do, no key shown); --compact off needs no lookup', async () => {
    await withFake({ contextWindow: WINDOW, modelInfo: { max_input_tokens: WINDOW, compaction: true }, modelLookupFailures: 3 }, async (fake, url) => {
      const dir = project();
      const refused = await run(dir, url, TASK);
      expect(refused.code, refused.stderr + refused.stdout).toBe(3);
      expect(refused.stderr).toContain(`Could not ask the Anthropic API what ${MODEL} supports (it answered 529`);
      expect(refused.stderr).toContain('Nothing was started');
      expect(refused.stderr).not.toContain(KEY);
      expect(refused.stderr).not.toMatch(/\n\s+at /);
      expect(fake.modelLookups).toHaveLength(1);
      expect(fake.requests).toHaveLength(0);
      expect(fs.existsSync(path.join(dir, '.durable-agent'))).toBe(false);

      const off = await run(dir, url, [...TASK, '--compact', 'off'], {}, 1);
      expect(off.stderr).not.toContain('Could not ask');
      expect(fake.modelLookups).toHaveLength(1);
      expect(fake.requests.length).toBeGreaterThan(0);
    });
  });

  it('--compact off fails on the context window with exit 6; client and the default (server) finish with exit 0', async () => {
    await withFake({ contextWindow: WINDOW, modelInfo: { max_input_tokens: WINDOW, compaction: true } }, async (fake, url) => {
      const off = await run(project(), url, [...TASK, '--compact', 'off']);
      expect(off.code, off.stderr + off.stdout).toBe(6);
      expect(off.stdout + off.stderr).toContain("no longer fits the model's context window");
      expect(fake.compactionsIssued).toBe(0);

      const server = await run(project(), url, TASK);
      expect(server.code, server.stderr + server.stdout).toBe(0);
      expect(fake.compactionsIssued).toBeGreaterThan(1);
    });
    await withFake({ contextWindow: WINDOW, modelInfo: { max_input_tokens: WINDOW, compaction: true } }, async (fake, url, counts) => {
      const client = await run(project(), url, [...TASK, '--compact', 'client', '--compact-trigger', '0.7']);
      expect(client.code, client.stderr + client.stdout).toBe(0);
      expect(client.stdout).toContain('context compacted');
      expect(counts.summaries).toBeGreaterThan(1);
      expect(fake.compactionsIssued).toBe(0);
      expect(Math.max(...fake.inputTokens)).toBeLessThanOrEqual(WINDOW);
    });
  }, 120_000);

  it.each([
    ['client', 'after-save-compacting:1'],
    ['client', 'after-save-compacted:1'],
    ['server', 'after-save-pause:1'],
    ['server', 'after-save-pause:2'],
  ])('--compact %s: SIGKILL at %s, then --resume finishes the run (exit 0)', async (mode, label) => {
    await withFake({ contextWindow: WINDOW, modelInfo: { max_input_tokens: WINDOW, compaction: true } }, async (fake, url, counts) => {
      const dir = project();
      const killed = await run(dir, url, [...TASK, '--compact', mode], { CRASH_AFTER: label, CRASH_MODE: 'sigkill' });
      expect(killed.signal, killed.stdout + killed.stderr).toBe('SIGKILL');
      const issuedBefore = fake.compactionsIssued;
      const verifiedBefore = fake.compactionBlocksVerified;
      const resumed = await run(dir, url, ['--resume']);
      expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain(`Read big.txt ${TURNS} times.`);
      if (mode === 'server') {
        // The block saved before the kill went back from the journal, and the API took it as its own.
        expect(issuedBefore).toBeGreaterThan(0);
        expect(fake.compactionBlocksVerified).toBeGreaterThan(verifiedBefore);
      } else {
        expect(counts.summaries).toBeGreaterThan(0);
      }
      expect(Math.max(...fake.inputTokens)).toBeLessThanOrEqual(WINDOW);
    });
  }, 120_000);

  it('--clear-tool-uses with --compact off: SIGKILL mid-run, a plain --resume clears as pinned and finishes; the journal keeps every result whole', async () => {
    await withFake({ contextWindow: WINDOW, modelInfo: { max_input_tokens: WINDOW, compaction: true } }, async (fake, url) => {
      const dir = project();
      const clearing = ['--compact', 'off', '--clear-tool-uses', '--clear-trigger', '8000', '--clear-keep', '2', '--clear-exclude', 'list_files'];
      const killed = await run(dir, url, [...TASK, ...clearing], { CRASH_AFTER: 'after-effect-write:12', CRASH_MODE: 'sigkill' });
      expect(killed.signal, killed.stdout + killed.stderr).toBe('SIGKILL');
      const before = fake.requests.length;
      const resumed = await run(dir, url, ['--resume']);
      expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain(`Read big.txt ${TURNS} times.`);
      expect(fake.requests.length).toBeGreaterThan(before);
      const edit = { type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 8_000 }, keep: { type: 'tool_uses', value: 2 }, exclude_tools: ['list_files'] };
      for (const request of fake.requests) {
        expect((request.body as unknown as { context_management: unknown }).context_management).toEqual({ edits: [edit] });
        expect(request.headers['anthropic-beta']).toBe('context-management-2025-06-27');
      }
      // 40 reads of a 6 KB file pass the 20,000-token window (off alone fails, above); cleared, they fit.
      expect(fake.clearings.length).toBeGreaterThan(5);
      expect(Math.max(...fake.inputTokens)).toBeLessThanOrEqual(WINDOW);
      const journal = fs.readFileSync(path.join(dir, '.durable-agent', 'journal.jsonl'), 'utf8');
      expect(journal.split('All work and no play. '.repeat(280)).length - 1).toBeGreaterThanOrEqual(TURNS);
    });
  }, 120_000);

  it('a resume cannot turn clearing on (exit 2), nor take a --clear-exclude tool the run does not offer', async () => {
    await withFake({ contextWindow: WINDOW, modelInfo: { max_input_tokens: WINDOW, compaction: true } }, async (_fake, url) => {
      const dir = project();
      const first = await run(dir, url, [...TASK, '--compact', 'off'], {}, 2);
      expect(first.code, first.stderr).toBe(5);
      const refused = await run(dir, url, ['--resume', '--clear-tool-uses']);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('was started without clearing tool results; a resume cannot turn it on');
      const typo = await run(project(), url, [...TASK, '--clear-exclude', 'reed_file']);
      expect(typo.code).toBe(2);
      expect(typo.stderr).toContain('names reed_file, which the run does not offer');
    });
  }, 60_000);

  it('a resume cannot switch the mode (exit 2), and keeps the pinned one without being told', async () => {
    await withFake({ contextWindow: WINDOW, modelInfo: { max_input_tokens: WINDOW, compaction: false } }, async (_fake, url) => {
      const dir = project();
      const first = await run(dir, url, TASK, {}, 3);
      expect(first.code, first.stderr).toBe(5);
      const refused = await run(dir, url, ['--resume', '--compact', 'server']);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('was started with compaction client; a resume cannot switch it to server');
    });
  }, 60_000);
});
