/**
 * Claude's request features together, as a user would run them: `run --thinking 4000
 * --web-search --tools text-editor` with the real CLI and SDK against the fake Messages API, the
 * run SIGKILLed right after the text editor's str_replace changed the file (before its outcome was
 * recorded) and resumed by a plain `run --resume`: the edit is in the file once, every thinking
 * block and every web search block goes back byte for byte (the fake answers 400 to one altered
 * or dropped), the cost budget is accepted for the model the README names, and nothing says the
 * model is deprecated.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ContentBlock, ModelReply } from '../../machines/agent-loop.types.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { assistantTurns, FakeAnthropic, type ReceivedRequest } from '../helpers/fake-anthropic.ts';
import { isServerToolBlock, serverToolUse } from '../helpers/fake-server-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
const MODEL = 'claude-sonnet-5-5';
const EDITOR = 'str_replace_based_edit_tool';
const USAGE = { input: 1_000, output: 100, cacheRead: 0, cacheWrite: 0 };

/** A search and an edit in the first reply; the answer in the second. */
const SCRIPT: Array<() => ModelReply> = [
  () => ({
    content: [
      { type: 'text', text: 'Checking the style guide first.' },
      serverToolUse('web_search', { query: 'house style for notes' }),
      { type: 'tool_use', id: 'toolu_edit', name: EDITOR, input: { command: 'str_replace', path: 'notes.md', old_str: 'todo', new_str: 'TODO' } },
    ],
    stop_reason: 'tool_use',
    usage: USAGE,
  }),
  () => ({ content: [{ type: 'text', text: 'The notes follow the house style now.' }], stop_reason: 'end_turn', usage: USAGE }),
];

const blocksIn = (request: ReceivedRequest, keep: (block: ContentBlock) => boolean): ContentBlock[] =>
  request.body.messages.flatMap((m) => (m.role === 'assistant' && typeof m.content !== 'string' ? m.content.filter(keep) : []));
const isThought = (block: ContentBlock) => block.type === 'thinking' || block.type === 'redacted_thinking';

describe('run --thinking --web-search --tools text-editor, SIGKILLed after an edit', () => {
  it('applies the edit once on resume and sends every thinking and search block back as it came', async () => {
    const fake = new FakeAnthropic((request) => ({ reply: SCRIPT[Math.min(assistantTurns(request), SCRIPT.length - 1)]!() }), { redactedThinking: true });
    const url = await fake.start();
    try {
      const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url };
      const dir = tempDir('da-claude-features-');
      fs.writeFileSync(path.join(dir, 'notes.md'), '# Notes\n- todo: tidy up\n');
      const args = ['run', '--model', MODEL, '--thinking', '4000', '--max-tokens', '8000', '--web-search', '--tools', 'text-editor', '--max-cost-usd', '5', '--task', 'Tidy the notes', '--plain'];

      const killed = await runCliAsync(args, { cwd: dir, env: { ...env, CRASH_AFTER: 'after-tool-return:1', CRASH_MODE: 'sigkill' } });
      expect(killed.signal, killed.stderr).toBe('SIGKILL');
      // The edit was made before the kill; its outcome was not recorded.
      expect(fs.readFileSync(path.join(dir, 'notes.md'), 'utf8')).toBe('# Notes\n- TODO: tidy up\n');
      expect(fake.requests).toHaveLength(1);

      const resumed = await runCliAsync(['run', '--resume', '--plain'], { cwd: dir, env });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain('The notes follow the house style now.');
      expect(fs.readFileSync(path.join(dir, 'notes.md'), 'utf8')).toBe('# Notes\n- TODO: tidy up\n');

      // Every request answered: none had a thinking or search block altered or dropped.
      expect(fake.answered).toHaveLength(fake.requests.length);
      const after = fake.requests.at(-1)!;
      expect(after.body.thinking).toEqual({ type: 'enabled', budget_tokens: 4000 });
      expect((after.body.tools ?? []).map((tool) => (tool as { type?: string }).type)).toEqual(['text_editor_20250728', 'web_search_20260318']);
      // The first reply's thinking (and its redacted part) and the search's call and result, all back.
      expect(blocksIn(after, isThought).map((block) => block.type)).toEqual(['thinking', 'redacted_thinking']);
      expect(blocksIn(after, isServerToolBlock).map((block) => block.type)).toEqual(['server_tool_use', 'web_search_tool_result']);
      expect(fake.thinkingBlocksVerified).toBeGreaterThanOrEqual(2);
      expect(fake.serverTools.blocksVerified).toBeGreaterThanOrEqual(2);
      // The edit's result tells the model it had been made, not made again.
      const result = after.body.messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content)).find((block) => block.type === 'tool_result' && block.tool_use_id === 'toolu_edit');
      expect(JSON.stringify(result?.content)).toContain('it was not made again');
      for (const output of [killed.stdout, killed.stderr, resumed.stdout, resumed.stderr]) expect(output).not.toMatch(/deprecated/i);
    } finally {
      await fake.stop();
    }
  });
});
