/**
 * The TUI mounted by ink on a stand-in terminal: what reaches the screen, and how it lets go
 * of the terminal when the run ends, the command fails, or the process exits on the spot.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FakeTerminal } from '../helpers/fake-terminal.ts';
import { createTuiReporter, type TuiReporter } from '../../src/tui/mount-tui.tsx';
import { runDemo, SETTINGS } from './demo-events.ts';


const opened: TuiReporter[] = [];
function open(terminal: FakeTerminal): TuiReporter {
  const reporter = createTuiReporter({ ...SETTINGS, stdout: terminal as unknown as NodeJS.WriteStream, tickMs: 60_000, patchConsole: false });
  opened.push(reporter);
  return reporter;
}
afterEach(() => {
  for (const reporter of opened.splice(0)) reporter.close();
});

function exitListeners(): Array<(code: number) => void> {
  return process.listeners('exit') as Array<(code: number) => void>;
}

describe('the mounted TUI', () => {
  it('draws nothing before the first event, so a refused run prints only its message', () => {
    const terminal = new FakeTerminal();
    const before = exitListeners().length;
    const reporter = open(terminal);
    reporter.close();
    expect(terminal.written).toBe('');
    expect(exitListeners()).toHaveLength(before);
  });

  it('writes the plain lines above the live view and leaves the final frame when the run ends', async () => {
    const { events } = await runDemo();
    const terminal = new FakeTerminal();
    const before = exitListeners().length;
    const reporter = open(terminal);
    for (const event of events) reporter.observer(event);
    expect(exitListeners()).toHaveLength(before + 1);
    reporter.close();
    expect(exitListeners()).toHaveLength(before);
    const text = terminal.text;
    let at = -1;
    for (const line of ['[turn 1][save A] pending=read_notes', '[turn 3][save B]', '[done] Report written to report.txt, task complete.']) {
      const found = text.indexOf(line, at + 1);
      expect(found, line).toBeGreaterThan(at);
      at = found;
    }
    expect(text).toContain('✔ done · after 3 turns');
    expect(text).not.toContain('resume with');
    // closed: later lines go straight to the terminal again
    const length = terminal.written.length;
    reporter.writers.out('after');
    expect(terminal.written.slice(length)).toBe('after\n');
  });

  it('on an exit from inside the run, draws the kill line and the resume command before the process ends', async () => {
    const { events } = await runDemo({ crashAfter: 'after-save-a:2' });
    const terminal = new FakeTerminal();
    const before = exitListeners();
    const reporter = open(terminal);
    for (const event of events) reporter.observer(event);
    const hook = exitListeners().find((listener) => !before.includes(listener));
    expect(hook).toBeDefined();
    reporter.writers.out('[kill] simulated kill at after-save-a:2');
    hook!(137); // what process.exit(137) runs, synchronously
    const text = terminal.text;
    expect(text).toContain('[kill] simulated kill at after-save-a:2');
    const lastA = events.findLast((e) => e.type === 'saved' && e.point === 'save-a');
    expect(text).toContain(`✖ killed (exit 137) · the run is saved up to record ${lastA?.type === 'saved' ? lastA.seq : '?'} (checkpoint A)`);
    expect(text).toContain('resume with: durable-agent demo --resume');
    expect(exitListeners()).toHaveLength(before.length);
  });

  it('when the command fails mid-run, ends the view before the error is printed below it', async () => {
    const { events } = await runDemo();
    const terminal = new FakeTerminal();
    const reporter = open(terminal);
    for (const event of events.slice(0, 5)) reporter.observer(event);
    reporter.close();
    expect(terminal.text).toContain('✖ stopped before the end (see below)');
    expect(terminal.text).toContain('resume with: durable-agent demo --resume');
    reporter.close(); // twice is harmless
  });
});
