/** @jsxRuntime automatic @jsxImportSource react */
/**
 * The live view over a long run: the lines written above it by ink's <Static> are not kept
 * (a 100,000-turn run would hold one line per save), and the screen is the same as when
 * every line was kept.
 */
import { cleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeTerminal } from '../helpers/fake-terminal.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { TuiApp } from '../../src/tui/components/TuiApp.tsx';
import { createTuiReporter } from '../../src/tui/mount-tui.tsx';
import { initialView, reduceView, type RunView } from '../../src/tui/run-view.ts';

afterEach(cleanup);

const SETTINGS = { verbose: false, resumeHint: 'durable-agent run --resume', task: 'read the pages' };

const page = defineTool<{ n: number }>({
  name: 'read_page',
  description: 'reads page n',
  inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
  readOnly: true,
  run: ({ n }) => `page ${n}`,
});

/** The real runtime's events for a run of `turns` one-call turns. */
async function eventsOf(turns: number): Promise<RunEvent[]> {
  const script = Array.from({ length: turns }, (_, i) => toolUseReply([{ id: `toolu_${i + 1}`, name: 'read_page', input: { n: i + 1 } }]));
  script.push(endTurnReply('all read'));
  const events: RunEvent[] = [];
  await startRun({ store: new MemoryStore(), model: scriptedModel(script), tools: [page], task: SETTINGS.task, maxTurns: turns, observer: (event) => events.push(event) });
  return events;
}

/** Every line kept, as the view did before: the lines a person is to see, in order. */
function everyLine(events: readonly RunEvent[]): string[] {
  let view = initialView(SETTINGS);
  for (const event of events) view = reduceView(view, { type: 'event', event, at: 0 });
  return view.log.map((entry) => entry.text);
}


describe('the live view over a long run', () => {
  it('holds as much after 2,000 turns as after 200: the lines written above it are let go', async () => {
    const events = await eventsOf(2_000);
    let view = initialView(SETTINGS);
    const size: Record<number, number> = {};
    for (const event of events) {
      view = reduceView(reduceView(view, { type: 'event', event, at: 0 }), { type: 'written' });
      if (event.type === 'saved' && event.point === 'save-b' && (event.turn === 200 || event.turn === 2_000)) size[event.turn] = JSON.stringify(view).length;
    }
    expect(view.logWritten).toBe(everyLine(events).length);
    expect(view.log).toEqual([]);
    // The same fields, a few digits longer.
    expect(size[2_000]).toBeLessThan(size[200]! * 1.05);
  });

  it('keeps no line it has written above the view, and writes each line once, in order', async () => {
    // Few turns: ink draws the whole view at every event, which takes a while on a busy machine.
    const events = await eventsOf(30);
    const lines = everyLine(events);
    const terminal = new FakeTerminal();
    const reporter = createTuiReporter({ ...SETTINGS, stdout: terminal as unknown as NodeJS.WriteStream, tickMs: 60_000, patchConsole: false });
    let most = 0;
    try {
      for (const event of events) {
        reporter.observer(event);
        most = Math.max(most, reporter.view().log.length);
      }
    } finally {
      reporter.close();
    }
    expect(lines.length).toBeGreaterThan(60);
    expect(most).toBe(0);
    expect(reporter.view().logWritten).toBe(lines.length);
    const text = terminal.text;
    let at = -1;
    for (const line of lines) {
      const found = text.indexOf(`${line}\n`, at + 1);
      expect(found, line).toBeGreaterThan(at);
      at = found;
    }
    const count = (needle: string) => text.split(needle).length - 1;
    expect(count('[save A]')).toBe(lines.filter((line) => line.includes('[save A]')).length);
    expect(count('[save B]')).toBe(lines.filter((line) => line.includes('[save B]')).length);
    expect(text).toContain('✔ done · after 30 turns');
  }, 180_000);

  it('draws the same screen, frame after frame, as a view that kept every line', async () => {
    const events = await eventsOf(30);
    let kept: RunView = initialView(SETTINGS);
    let bounded: RunView = initialView(SETTINGS);
    const full = render(<TuiApp view={kept} now={0} columns={100} />);
    const lean = render(<TuiApp view={bounded} now={0} columns={100} />);
    for (const event of events) {
      kept = reduceView(kept, { type: 'event', event, at: 0 });
      bounded = reduceView(bounded, { type: 'event', event, at: 0 });
      full.rerender(<TuiApp view={kept} now={0} columns={100} />);
      lean.rerender(<TuiApp view={bounded} now={0} columns={100} />);
      bounded = reduceView(bounded, { type: 'written' });
      expect(lean.lastFrame()).toBe(full.lastFrame());
    }
    expect(kept.log.length).toBeGreaterThan(60);
    expect(bounded.log).toEqual([]);
    expect(bounded.logWritten).toBe(kept.log.length);
  }, 180_000);
});
