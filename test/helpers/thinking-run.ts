/**
 * A run whose replies carry thinking, redacted thinking and every kind of server tool block, as
 * the real runtime and the real SDK get them from the fake Messages API: for the tests of what a
 * person watching a run sees of those blocks (the live view, the plain log, the visualizer).
 *
 * Reply 1: thinking, redacted thinking, text, a web search, a web fetch, a bash command and a
 * call of the run's own lookup tool. Reply 2: thinking, then code execution that runs long (the
 * turn pauses with the call open). Reply 3: the paused call's result (encrypted stdout) first,
 * thinking, a text editor call, the answer.
 */
import path from 'node:path';
import type { ModelReply } from '../../machines/agent-loop.types.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { anthropicModel } from '../../src/model/anthropic-model.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { assistantTurns, FakeAnthropic, type StreamPacing } from './fake-anthropic.ts';
import { serverToolUse } from './fake-server-tools.ts';
import { tempDir } from './temp-dir.ts';

export const THINKING_MODEL = 'claude-test-model';
const USAGE = { input: 1_000, output: 100, cacheRead: 0, cacheWrite: 0 };

export const THINKING_SCRIPT: ReadonlyArray<() => ModelReply> = [
  () => ({
    content: [
      { type: 'text', text: 'Let me look around first.' },
      serverToolUse('web_search', { query: 'durable agent runtimes' }),
      serverToolUse('web_fetch', { url: 'https://example.com/a' }),
      serverToolUse('bash_code_execution', { command: 'ls -la /tmp' }),
      { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'rates' } },
    ],
    stop_reason: 'tool_use',
    usage: USAGE,
  }),
  () => ({ content: [serverToolUse('code_execution', { code: 'print(sum(range(10)))\nprint("done")' }, { paused: true })], stop_reason: 'pause_turn', usage: USAGE }),
  () => ({
    content: [serverToolUse('text_editor_code_execution', { command: 'create', path: 'notes.txt', file_text: 'x' }), { type: 'text', text: 'All done.' }],
    stop_reason: 'end_turn',
    usage: USAGE,
  }),
];

export interface ThinkingRun {
  events: RunEvent[];
  store: FileStore;
  fake: FakeAnthropic;
}

export interface ThinkingRunOptions {
  stream: boolean;
  observer?: ((event: RunEvent) => void) | undefined;
  /** How the first reply streams (holdAt to look at the screen mid-thinking). */
  pacing?: StreamPacing | undefined;
}

/** Runs THINKING_SCRIPT to its end on a file store; the fake is stopped after. */
export async function thinkingRun(options: ThinkingRunOptions): Promise<ThinkingRun> {
  const fake = new FakeAnthropic(
    (request) => {
      const reply = THINKING_SCRIPT[assistantTurns(request)]!();
      return options.stream && request.index === 0 && options.pacing ? { stream: reply, ...options.pacing } : { reply };
    },
    { redactedThinking: true },
  );
  const url = await fake.start();
  const events: RunEvent[] = [];
  const store = new FileStore(path.join(tempDir('da-thinking-'), '.durable-agent'));
  try {
    const lookup = defineTool<{ q: string }>({ name: 'lookup', description: 'look up', readOnly: true, inputSchema: { type: 'object' }, run: async ({ q }) => `found ${q}` });
    const model = anthropicModel({
      model: THINKING_MODEL,
      apiKey: 'test-only-key',
      baseURL: url,
      maxRetries: 0,
      stream: options.stream,
      thinking: { type: 'enabled', budget_tokens: 2_000 },
      serverTools: { webSearch: true, webFetch: true, codeExecution: true },
    });
    const result = await startRun({
      store,
      model,
      tools: [lookup],
      task: 'Survey durable agent runtimes',
      maxTokens: 8_000,
      observer: (event) => {
        events.push(event);
        options.observer?.(event);
      },
    });
    if (result.status !== 'done') throw new Error(`the thinking run ended ${result.status}: ${result.failure?.message ?? ''}`);
  } finally {
    await fake.stop();
  }
  return { events, store, fake };
}
