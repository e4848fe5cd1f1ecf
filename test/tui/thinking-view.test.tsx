/** @jsxRuntime automatic @jsxImportSource react */
/**
 * Claude's thinking and server tool blocks where a person watches a run: the live view (each
 * block one dim line above it once the reply is whole; while a reply streams, its thinking as a
 * growing count of characters, its server tool calls with their input so far) and the plain
 * output (the same lines). Fed by the real runtime and the real SDK against the fake Messages API,
 * streamed and not. No signature, redacted data or encrypted content is ever drawn.
 */
import { Box } from 'ink';
import { cleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ContentBlock } from '../../machines/agent-loop.types.ts';
import { plainReporter } from '../../src/cli/plain-reporter.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { LiveView } from '../../src/tui/components/LiveView.tsx';
import { TuiApp } from '../../src/tui/components/TuiApp.tsx';
import { createTuiReporter } from '../../src/tui/mount-tui.tsx';
import { initialView, reduceView, type RunView } from '../../src/tui/run-view.ts';
import { FakeTerminal } from '../helpers/fake-terminal.ts';
import { thinkingRun } from '../helpers/thinking-run.ts';

// A person at a terminal: where ink believes it runs in CI it draws nothing until unmount (see stream-view.test.ts).
vi.hoisted(() => {
  process.env.CI = 'false';
  delete process.env.CONTINUOUS_INTEGRATION;
});

afterEach(cleanup);

/** What every reply's blocks carry that is not text to a reader: no screen or line may hold any of it. */
function sealedValues(events: readonly RunEvent[]): string[] {
  const found: string[] = [];
  const walk = (value: unknown, key = '', type = ''): void => {
    if (typeof value === 'string') {
      if (key.startsWith('encrypted_') || key === 'signature' || (key === 'data' && type === 'redacted_thinking')) found.push(value);
    } else if (Array.isArray(value)) value.forEach((inner) => void walk(inner));
    else if (value !== null && typeof value === 'object') for (const [k, inner] of Object.entries(value)) walk(inner, k, String((value as { type?: unknown }).type));
  };
  for (const event of events) if (event.type === 'model-reply') walk(event.reply.content);
  return found;
}

const replies = (events: readonly RunEvent[]) => events.flatMap((e) => (e.type === 'model-reply' ? [e.reply.content as ContentBlock[]] : []));

/** The lines the plain output and the live view print for the run's replies (ids as the fake issued them). */
const REPLY_LINES = [
  '[thinking] 52 characters: Thought 1: 1 messages so far; the next step follows.',
  '[thinking] redacted thinking',
  '[server tool] web_search srvtoolu_fake_001 "durable agent runtimes" → 2 results',
  '[server tool] web_fetch srvtoolu_fake_002 https://example.com/a → fetched https://example.com/a',
  '[server tool] bash_code_execution srvtoolu_fake_003 ls -la /tmp → exit 0, output: ran: ls -la /tmp',
  '[turn 1][save A] pending=lookup',
  '[turn 1][save B]',
  '[thinking] 52 characters: Thought 3: 3 messages so far; the next step follows.',
  '[thinking] redacted thinking',
  '[server tool] code_execution srvtoolu_fake_004 print(sum(range(10))) print("done") → still running: its result comes in the next reply',
  '[thinking] 52 characters: Thought 5: 4 messages so far; the next step follows.',
  '[thinking] redacted thinking',
  '[server tool] code_execution srvtoolu_fake_004 → exit 0, output encrypted',
  '[server tool] text_editor_code_execution srvtoolu_fake_005 create notes.txt → file created',
  '[done] All done.',
];

function foldView(events: readonly RunEvent[], upTo = events.length): RunView {
  let view = initialView({ verbose: false, resumeHint: 'durable-agent run --resume', task: null });
  events.slice(0, upTo).forEach((event, i) => void (view = reduceView(view, { type: 'event', event, at: 1_000 + i })));
  return view;
}

function liveFrame(view: RunView, columns = 100): string {
  const { lastFrame } = render(
    <Box width={columns}>
      <LiveView view={view} now={5_000} columns={columns} />
    </Box>,
  );
  return lastFrame() ?? '';
}

describe.each([false, true])('a reply with thinking and server tool blocks, streamed: %s', (stream) => {
  it('the plain output prints one line for each thinking block and each server tool call, with its result, on stdout', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const run = await thinkingRun({ stream, observer: plainReporter({ out: (l) => out.push(l), err: (l) => err.push(l) }, false) });
    expect(out).toEqual(REPLY_LINES);
    expect(err).toEqual([]);
    const sealed = sealedValues(run.events);
    // 3 signatures, 3 redacted thinking blocks' data, 2 search results' pages, 1 encrypted stdout: none printed.
    expect(sealed).toHaveLength(9);
    for (const value of sealed) expect(out.join('\n')).not.toContain(value);
  });

  it('the live view keeps the same lines above it, dim, and draws none of the encrypted content', async () => {
    const run = await thinkingRun({ stream });
    const view = foldView(run.events);
    const blockEntries = view.log.filter((entry) => /^\[(thinking|server tool)\]/.test(entry.text));
    expect(blockEntries).toHaveLength(REPLY_LINES.filter((line) => /^\[(thinking|server tool)\]/.test(line)).length);
    expect(blockEntries.every((entry) => entry.tone === 'detail')).toBe(true);
    expect(view.log.map((entry) => entry.text)).toEqual(REPLY_LINES);
    const { lastFrame } = render(<TuiApp view={view} now={9_000} columns={100} />);
    // A line longer than the terminal wraps: read the frame with its line breaks as spaces.
    const frame = (lastFrame() ?? '').replace(/\s+/g, ' ');
    let at = -1;
    for (const line of REPLY_LINES) {
      const next = frame.indexOf(line, at + 1);
      expect(next, line).toBeGreaterThan(at);
      at = next;
    }
    for (const value of sealedValues(run.events)) expect(frame).not.toContain(value);
  });
});

describe('while a reply streams in', () => {
  it('the live view counts its thinking without showing it, then shows the server tool calls with their input so far', async () => {
    const run = await thinkingRun({ stream: true });
    const streamed = run.events.map((event, i) => ({ event, i })).filter(({ event }) => event.type === 'model-stream');
    const pieceOf = (match: (delta: Extract<RunEvent, { type: 'model-stream' }>['delta']) => boolean, nth = 0) =>
      streamed.filter(({ event }) => event.type === 'model-stream' && match(event.delta))[nth]!.i + 1;

    // Two pieces of the first thinking block (12 characters each) have arrived.
    const midThinking = liveFrame(foldView(run.events, pieceOf((d) => d.type === 'thinking', 1)));
    expect(midThinking).toMatch(/reply\s+thinking \(24 characters\)/);
    expect(midThinking).not.toContain('Thought 1');
    expect(midThinking).not.toContain('redacted');

    // The search's input is whole; the fetch has begun.
    const midTools = liveFrame(foldView(run.events, pieceOf((d) => d.type === 'server-tool-use', 1)));
    expect(midTools).toMatch(/reply\s+thinking \(52 characters\) · redacted thinking/);
    expect(midTools).toContain('Let me look around first.');
    expect(midTools).toContain('→ web_search (server tool) {"query":"durable agent runtimes"}');
    expect(midTools).toContain('→ web_fetch (server tool)');
    for (const value of sealedValues(run.events)) expect(midTools).not.toContain(value);

    // Once the reply is whole the reply row is gone: its blocks are lines above the view.
    const whole = foldView(run.events, run.events.findIndex((e) => e.type === 'model-reply') + 1);
    expect(liveFrame(whole)).not.toMatch(/^reply/m);
    expect(whole.log.map((entry) => entry.text)).toEqual(REPLY_LINES.slice(0, 5));
    expect(replies(run.events)).toHaveLength(3);
  });

  it('on a terminal, mid-thinking: the count of what has arrived is drawn at once; the whole block is one line once the reply is done', async () => {
    const terminal = new FakeTerminal();
    terminal.columns = 140;
    const reporter = createTuiReporter({ verbose: false, resumeHint: 'durable-agent run --resume', task: null, stdout: terminal as unknown as NodeJS.WriteStream, tickMs: 60_000, patchConsole: false });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const atHold = new Promise<void>((resolve) => (reached = resolve));
    // Events 0-3: message_start, the thinking block's start, two pieces of its text; held before the third.
    let written = 0;
    const pacing = { holdAt: { event: 4, until: held }, onEvent: () => void (++written === 4 && reached()) };
    let seen = '';
    const done = thinkingRun({ stream: true, observer: reporter.observer, pacing });
    try {
      await atHold;
      // The pieces cross the socket and the SDK's parser; ink draws within ~17 ms.
      await new Promise((resolve) => setTimeout(resolve, 150));
      seen = terminal.text;
    } finally {
      release();
    }
    const run = await done;
    reporter.close();
    const frameAtHold = seen.slice(seen.lastIndexOf('durable-agent'));
    expect(frameAtHold).toMatch(/reply\s+thinking \(24 characters\)/);
    expect(frameAtHold).not.toContain('Thought 1');
    const end = terminal.text;
    for (const line of REPLY_LINES) expect(end).toContain(line);
    for (const value of sealedValues(run.events)) expect(end).not.toContain(value);
  });
});
