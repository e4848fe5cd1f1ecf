/** @jsxRuntime automatic @jsxImportSource react */
/** Frames of the live view at the moments that matter, drawn by ink from the demo's real events. */
import { Box } from 'ink';
import { cleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { LiveView } from '../../src/tui/components/LiveView.tsx';
import { TuiApp } from '../../src/tui/components/TuiApp.tsx';
import type { RunEvent } from '../../src/core/run-events.ts';
import { reduceView, type RunView } from '../../src/tui/run-view.ts';
import { resumeDemo, runDemo, viewOf } from './demo-events.ts';

afterEach(cleanup);

function frame(view: RunView, now: number, columns = 100): string {
  const { lastFrame } = render(
    <Box width={columns}>
      <LiveView view={view} now={now} columns={columns} />
    </Box>,
  );
  return lastFrame() ?? '';
}

const toolStarted = (id: string) => (e: RunEvent) => e.type === 'tool-started' && e.call.id === id;
const saved = (point: string, turn: number) => (e: RunEvent) => e.type === 'saved' && e.point === point && e.turn === turn;

describe('while a call is pending', () => {
  it('shows the task, the model, the current state, the turn, the running call and what is on disk', async () => {
    const { events } = await runDemo();
    const view = viewOf(events, toolStarted('toolu_02'));
    const startedAt = view.calls[0]!.startedAt!;
    const text = frame(view, startedAt + 1_234);
    expect(text).toContain('durable-agent · scripted-demo · run ');
    expect(text).toContain('Turn sales-notes.txt into a short report and write it to report.txt.');
    expect(text).toMatch(/state\s+awaitingModel → ▶ pendingTool \(A\) → effectRecorded → closed \(B\)/);
    expect(text).toMatch(/turn\s+2 of 20 ███░+/);
    expect(text).toMatch(/tools\s+[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] count_words toolu_02 · read-only · running 1\.2 s/);
    const seq = view.lastSave!.seq;
    expect(text).toMatch(new RegExp(`saved\\s+checkpoint A \\(pendingTool\\) · record ${seq} · \\d+ B · 1\\.2 s ago`));
    expect(text).toMatch(new RegExp(`ledger\\s+1 entry · this process wrote ${seq + 1} records · \\d+ B`));
    expect(text).toMatch(/now\s+running count_words/);
    // the scripted model has no price: no cost at all
    expect(text).toMatch(/tokens\s+in 200 · out \d+ · cache read 0 · cache write 0\n/);
    expect(text).not.toContain('$');
  });

  it('marks a side effect as such', async () => {
    const { events } = await runDemo();
    const view = viewOf(events, toolStarted('toolu_03'));
    expect(frame(view, view.calls[0]!.startedAt!)).toContain('write_report toolu_03 · side effect · running 0.0 s');
  });

  it('shows an estimated cost for a model whose price is known', async () => {
    const { events } = await runDemo({ model: 'claude-sonnet-4-5-20250929' });
    const view = viewOf(events, saved('save-a', 1));
    expect(frame(view, view.lastSave!.at)).toMatch(/tokens\s+in 100 · out \d+ · cache read 0 · cache write 0 · ≈ \$0\.\d{4} \(estimate\)/);
  });

  it('times the model call', async () => {
    const { events } = await runDemo();
    const view = viewOf(events, (e) => e.type === 'model-call');
    expect(frame(view, 3_500)).toMatch(/now\s+[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] asking the model · 2\.5 s/);
  });
});

describe('after checkpoint B', () => {
  it('highlights closed (B), shows the call recorded and B as the last save', async () => {
    const { events } = await runDemo();
    const view = viewOf(events, saved('save-b', 1));
    const text = frame(view, view.lastSave!.at + 2_000);
    expect(text).toContain('awaitingModel → pendingTool (A) → effectRecorded → ▶ closed (B)');
    expect(text).toMatch(/✔ read_notes toolu_01 · read-only · ran in [\d.]+ s, in the ledger/);
    expect(text).toMatch(new RegExp(`saved\\s+checkpoint B \\(closed\\) · record ${view.lastSave!.seq} · \\d+ B · 2\\.0 s ago`));
  });

  it('keeps the finished turns above the live view as the plain lines', async () => {
    const { events } = await runDemo();
    const view = viewOf(events, saved('save-b', 2));
    const { lastFrame } = render(<TuiApp view={view} now={view.lastSave!.at} columns={100} />);
    const text = lastFrame() ?? '';
    expect(text.startsWith('[turn 1][save A] pending=read_notes\n[turn 1][save B]\n[turn 2][save A] pending=count_words\n[turn 2][save B]\n')).toBe(true);
    expect(text).toContain('▶ closed (B)');
  });
});

describe('on resume', () => {
  it('shows the reconcile decision for the dangling call in its own box', async () => {
    const run = await runDemo({ crashAfter: 'after-effect-write:3' });
    const view = viewOf(await resumeDemo(run), (e) => e.type === 'reconciled');
    const text = frame(view, 0);
    expect(text).toMatch(/╭─+╮\n│ resumed at turn 3 \(effectRecorded\) · dangling: write_report +│\n│ ✔ write_report toolu_03 · reused from the ledger, not re-run +│\n╰─+╯/);
    expect(text).toMatch(/tokens\s+in 300 · out 282 · cache read 0 · cache write 0/);
    expect(text).toMatch(/ledger\s+3 entries/);
  });

  it('warns about a side effect whose state is unknown, with the reason', async () => {
    const run = await runDemo({ crashAfter: 'after-tool-return:3' });
    const view = viewOf(await resumeDemo(run, { verify: false }), (e) => e.type === 'finished');
    const text = frame(view, view.lastSave!.at);
    expect(text).toContain('⚠ write_report toolu_03 · unknown side effect: reported to the model (is_error), not re-run');
    expect(text).toContain('no result was recorded for it');
    expect(text).toMatch(/now\s+✔ done · after 3 turns/);
  });

  it('shows a read-only call re-run and a verified side effect', async () => {
    const rerun = viewOf(await resumeDemo(await runDemo({ crashAfter: 'after-tool-return:1' })), (e) => e.type === 'reconciled');
    expect(frame(rerun, 0)).toContain('↻ read_notes toolu_01 · no ledger entry, read-only: re-run');
    const verified = viewOf(await resumeDemo(await runDemo({ crashAfter: 'after-tool-return:3' })), (e) => e.type === 'reconciled');
    expect(frame(verified, 0)).toContain('✔ write_report toolu_03 · verified as done, not re-run');
  });
});

describe('when the process stops', () => {
  it('says the run was killed, where it is saved, and how to resume', async () => {
    const { events } = await runDemo({ crashAfter: 'after-effect-write:3' });
    let view = viewOf(events);
    view = reduceView(view, { type: 'print', stream: 'out', text: '[kill] simulated kill at after-effect-write:3' });
    view = reduceView(view, { type: 'exit', code: 137 });
    const text = frame(view, view.lastSave!.at);
    expect(text).toMatch(
      new RegExp(`now\\s+✖ killed \\(exit 137\\) · the run is saved up to record ${view.lastSave!.seq} \\(ledger entry\\)\\n\\s+resume with: durable-agent demo --resume`),
    );
    expect(text).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
  });
});

describe('on a narrow terminal (40 columns)', () => {
  it('wraps between parts, keeps every line within 40 columns and loses nothing', async () => {
    const run = await runDemo({ crashAfter: 'after-effect-write:3' });
    const resumed = await resumeDemo(run);
    for (const view of [viewOf(run.events, toolStarted('toolu_03')), viewOf(resumed, (e) => e.type === 'saved')]) {
      const text = frame(view, view.lastSave!.at + 500, 40);
      const lines = text.split('\n');
      for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(40);
      for (const line of lines) expect(line, 'no line starts with a separator').not.toMatch(/^\s*·/);
      expect(text).toMatch(/turn\s+3 of 20 ██░+\n/);
      expect(text).toContain('▶ ');
      expect(text.replace(/\s+/g, ' ')).toContain('Turn sales-notes.txt into a short report and write it to report.txt.');
    }
    const panel = frame(viewOf(resumed, (e) => e.type === 'saved'), 0, 40);
    expect(panel).toContain('│ ✔ write_report toolu_03 ·');
    const flat = panel.replace(/[│\s]+/g, ' ');
    expect(flat).toContain('resumed at turn 3 (effectRecorded) · dangling: write_report');
    expect(flat).toContain('reused from the ledger, not re-run');
    expect(panel, 'no empty line inside the box').not.toMatch(/│ +│/);
  });
});

describe('while a call waits for a person', () => {
  it('shows awaitingDecision as the current state, in the turn’s order, and how long the call has waited', async () => {
    const { events } = await runDemo({ requireApproval: ['write_report'] });
    const view = viewOf(events, (e) => e.type === 'waiting');
    const since = view.prompt!.since;
    const text = frame(view, since + 65_000);
    expect(text).toMatch(/state\s+awaitingModel → pendingTool \(A\) → ▶ awaitingDecision → effectRecorded → closed \(B\)/);
    expect(text).toMatch(/now\s+[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] waiting for a person's decision on write_report toolu_03 · 1 min 05 s/);
    // Once asked, the row keeps the state, so that it does not jump when the run goes on.
    const after = frame(viewOf(events, (e) => e.type === 'finished'), since + 66_000);
    expect(after).toMatch(/state\s+awaitingModel → pendingTool \(A\) → ▶ awaitingDecision → effectRecorded → closed \(B\)/);
  });

  it('leaves awaitingDecision out of the row of a run that never waits', async () => {
    const { events } = await runDemo();
    expect(frame(viewOf(events), Date.now())).not.toContain('awaitingDecision');
  });
});
