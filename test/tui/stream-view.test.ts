/**
 * A streamed reply on screen while it arrives: the TUI mounted on a stand-in terminal, the plain
 * log with --verbose, both fed by the real runtime and the real SDK against the fake API.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeTerminal } from '../helpers/fake-terminal.ts';
import { plainReporter } from '../../src/cli/plain-reporter.ts';
import { anthropicModel } from '../../src/model/anthropic-model.ts';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import type { RunObserver } from '../../src/core/run-events.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { createTuiReporter, type TuiReporter } from '../../src/tui/mount-tui.tsx';
import { replyLines } from '../../src/tui/format.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { assistantTurns, FakeAnthropic, type StreamPacing, streamEventsOf } from '../helpers/fake-anthropic.ts';

// This test plays a person at a terminal. Where ink believes it runs in CI (CI=true, as on the CI
// machines) it draws nothing until unmount, which is why the CLI never picks the TUI there
// (output-mode.ts); ink reads the variable when it is first loaded, so it is set before any import.
vi.hoisted(() => {
  process.env.CI = 'false';
  delete process.env.CONTINUOUS_INTEGRATION;
});

const MODEL = 'claude-test-model';
const REPLY = toolUseReply(
  [{ id: 'toolu_1', name: 'lookup', input: { q: 'the weather in Lisbon tomorrow' } }],
  'First I will check the forecast.\nThen I will answer.',
);


const opened: TuiReporter[] = [];
afterEach(() => {
  for (const reporter of opened.splice(0)) reporter.close();
});

/** Streams REPLY held at its last piece of input until `look` has seen the screen; then the run goes on to its end. */
async function runHeld(observer: RunObserver, look: () => void | Promise<void>): Promise<void> {
  const events = streamEventsOf(REPLY, MODEL, 0, 6);
  const lastInput = events.findLastIndex((e) => (e.delta as { type?: string } | undefined)?.type === 'input_json_delta');
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let reached!: () => void;
  const atHold = new Promise<void>((resolve) => (reached = resolve));
  let written = 0;
  const pacing: StreamPacing = { chunk: 6, holdAt: { event: lastInput, until: held }, onEvent: () => void (++written === lastInput && reached()) };
  const server = new FakeAnthropic((request) => (assistantTurns(request) === 0 ? { stream: REPLY, ...pacing } : { reply: endTurnReply('Sunny, 24 °C.') }));
  const url = await server.start();
  try {
    const model = anthropicModel({ model: MODEL, apiKey: 'test-only-key', baseURL: url, maxRetries: 0 });
    const run = startRun({ store: new MemoryStore(), model, tools: countingTools().tools, task: 'weather in Lisbon?', observer });
    await atHold;
    // The pieces written so far have crossed the socket and the SDK's parser by now.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await look();
    release();
    expect((await run).status).toBe('done');
  } finally {
    await server.stop();
  }
}

describe('a reply streaming in', () => {
  it('the live view shows its text and the tool input so far before the reply is whole, and clears them when it is', async () => {
    const terminal = new FakeTerminal();
    const reporter = createTuiReporter({ verbose: false, resumeHint: 'durable-agent run --resume', task: null, stdout: terminal as unknown as NodeJS.WriteStream, tickMs: 60_000, patchConsole: false });
    opened.push(reporter);
    let atHold = '';
    await runHeld(reporter.observer, async () => {
      // ink draws at most every ~33 ms: the last frame is on the terminal after that.
      await new Promise((resolve) => setTimeout(resolve, 50));
      atHold = terminal.text;
    });
    const lastFrame = atHold.slice(atHold.lastIndexOf('durable-agent'));
    expect(lastFrame).toMatch(/reply\s+First I will check the forecast\./);
    expect(lastFrame).toContain('Then I will answer.');
    expect(lastFrame).toMatch(/→ lookup \{"q":"the weather in Lisbon/);
    expect(lastFrame).not.toContain('tomorrow"}');
    reporter.close();
    const end = terminal.text.slice(terminal.text.lastIndexOf('durable-agent'));
    expect(end).not.toMatch(/reply\s+First I will/);
    expect(end).toContain('✔ done');
  });

  it('the plain log with --verbose prints each line of the text and each call as they arrive (stderr), nothing on stdout', async () => {
    const out: string[] = [];
    const err: string[] = [];
    let atHold: string[] = [];
    await runHeld(plainReporter({ out: (l) => out.push(l), err: (l) => err.push(l) }, true), () => {
      atHold = [...err];
    });
    expect(atHold.filter((line) => line.startsWith('[model] ') && !line.startsWith('[model] re'))).toEqual([
      '[model] First I will check the forecast.',
      '[model] Then I will answer.',
      '[model] calls lookup toolu_1',
    ]);
    expect(out.some((line) => line.includes('forecast'))).toBe(false);
  });

  it('keeps the newest lines of text, the end of a long line, and says when the stream broke off', () => {
    const reply = { text: 'one\ntwo\nthree\nfour and a line far too long to fit', thinking: [], tools: [{ index: 1, id: 't', name: 'lookup', input: '{"q":"x"' }], restarts: 1 };
    expect(replyLines(reply, 20)).toEqual(['two', 'three', '…far too long to fit', '→ lookup {"q":"x"', '(the stream broke off; asked again)']);
  });
});
