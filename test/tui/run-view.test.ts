/** The live view's state folded from the demo's real events. */
import { describe, expect, it } from 'vitest';
import { plainReporter } from '../../src/cli/plain-reporter.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { initialView, reduceView } from '../../src/tui/run-view.ts';
import { PT } from '../../src/lang/pt.ts';
import { DEMO_PLAIN_LINES, resumeDemo, runDemo, SETTINGS, viewOf } from './demo-events.ts';

function plainOut(events: readonly RunEvent[], verbose = false): { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  const report = plainReporter({ out: (line) => out.push(line), err: (line) => err.push(line) }, verbose);
  for (const event of events) report(event);
  return { out, err };
}

const toolStarted = (id: string) => (e: RunEvent) => e.type === 'tool-started' && e.call.id === id;
const saved = (point: string, turn: number) => (e: RunEvent) => e.type === 'saved' && e.point === point && e.turn === turn;

describe('the permanent log', () => {
  it('holds exactly the plain stdout and stderr lines, in order', async () => {
    const { events } = await runDemo();
    for (const verbose of [false, true]) {
      const view = viewOf(events, undefined, { ...SETTINGS, verbose });
      const { out, err } = plainOut(events, verbose);
      expect(view.log.filter((e) => e.tone !== 'detail').map((e) => e.text)).toEqual(out);
      expect(view.log.filter((e) => e.tone === 'detail').map((e) => e.text)).toEqual(err);
    }
    expect(viewOf(events).log.map((e) => e.text)).toEqual(DEMO_PLAIN_LINES);
  });

  it('says the lesson\'s lines in the language it is given, as the plain output does', async () => {
    const run = await runDemo({ crashAfter: 'after-effect-write:3' });
    const events = await resumeDemo(run);
    const lines = viewOf(events, undefined, { ...SETTINGS, words: PT }).log.map((e) => e.text);
    const out: string[] = [];
    const report = plainReporter({ out: (line) => out.push(line), err: () => {} }, false, null, PT);
    for (const event of events) report(event);
    expect(lines).toEqual(out);
    expect(lines).toEqual([
      '[resume] li turn=3 pending=write_report',
      '[resume][reconcile] tool_use_id=toolu_03 name=write_report acerto no livro-razão, reusando o resultado, sem reexecutar',
      '[turn 3][save B] resultado da ferramenta deste turno preenchido após a retomada',
      // The scripted model here speaks English: the done line is its own words.
      '[done] Report written to report.txt, task complete.',
    ]);
  });

  it('adds the lines the command prints itself, and numbers every entry', () => {
    let view = initialView(SETTINGS);
    view = reduceView(view, { type: 'print', stream: 'out', text: '[kill] simulated kill at after-save-a:1' });
    view = reduceView(view, { type: 'print', stream: 'err', text: '[interrupted] SIGINT' });
    expect(view.log).toEqual([
      { id: 0, text: '[kill] simulated kill at after-save-a:1', tone: 'notice' },
      { id: 1, text: '[interrupted] SIGINT', tone: 'alert' },
    ]);
  });
});

describe('the live state', () => {
  it('starts with the task, the model and MAX_TURNS', async () => {
    const { events } = await runDemo();
    const view = viewOf(events, (e) => e.type === 'started');
    expect(view).toMatchObject({ model: 'scripted-demo', maxTurns: 20, state: 'awaitingModel', turn: 0, ledgerEntries: 0 });
    expect(view.task).toContain('sales-notes.txt');
    expect(view.runId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('times the model call while it is out', async () => {
    const { events } = await runDemo();
    expect(viewOf(events, (e) => e.type === 'model-call').modelCall).toEqual({ turn: 0, since: 1_000 });
    expect(viewOf(events, (e) => e.type === 'model-reply').modelCall).toBeNull();
  });

  it("counts a reply's tokens at once, but keeps the last durable save as the last safe point", async () => {
    const { events } = await runDemo();
    const before = viewOf(events, (e) => e.type === 'model-reply');
    const counted = viewOf(events, saved('model-reply', 0));
    expect(before.usage).toEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
    expect(counted.usage?.input).toBe(100);
    expect(counted.written.records).toBe(before.written.records + 1);
    expect(counted.lastSave).toEqual(before.lastSave);
    expect(counted.lastSave?.point).toBe('save-start');
  });

  it('shows a call as waiting at checkpoint A, running, returned, then recorded', async () => {
    const { events } = await runDemo();
    const atA = viewOf(events, saved('save-a', 2));
    expect(atA.state).toBe('pendingTool');
    expect(atA.turn).toBe(2);
    expect(atA.lastSave).toMatchObject({ point: 'save-a', state: 'pendingTool' });
    expect(atA.calls).toEqual([expect.objectContaining({ id: 'toolu_02', name: 'count_words', readOnly: true, status: 'waiting' })]);

    const running = viewOf(events, toolStarted('toolu_02'));
    expect(running.calls[0]).toMatchObject({ status: 'running', startedAt: expect.any(Number) });

    const returned = viewOf(events, (e) => e.type === 'tool-finished' && e.call.id === 'toolu_02');
    expect(returned.calls[0]).toMatchObject({ status: 'returned', outcome: 'ran', ms: expect.any(Number) });

    const recorded = viewOf(events, saved('effect-write', 2));
    expect(recorded.state).toBe('effectRecorded');
    expect(recorded.ledgerEntries).toBe(2);
    expect(recorded.calls[0]).toMatchObject({ status: 'recorded' });

    const atB = viewOf(events, saved('save-b', 2));
    expect(atB.state).toBe('closed');
    expect(atB.lastSave?.point).toBe('save-b');
    expect(atB.calls[0]?.status).toBe('recorded');
  });

  it('marks the side effect as such and counts what this process wrote', async () => {
    const { events } = await runDemo();
    const view = viewOf(events, toolStarted('toolu_03'));
    expect(view.calls[0]).toMatchObject({ name: 'write_report', readOnly: false });
    const savedEvents = events.filter((e) => e.type === 'saved');
    const end = viewOf(events);
    expect(end.written.records).toBe(savedEvents.length);
    expect(end.written.bytes).toBe(savedEvents.reduce((sum, e) => sum + (e.type === 'saved' ? e.bytes : 0), 0));
    expect(end.usage?.input).toBeGreaterThan(0);
    expect(end.ending).toMatchObject({ kind: 'finished', result: { status: 'done', turn: 3 } });
  });

  it('keeps the first ending: an exit after the finish does not turn a done run into a kill', async () => {
    const { events } = await runDemo();
    const done = viewOf(events);
    expect(reduceView(done, { type: 'exit', code: 0 }).ending).toEqual(done.ending);
    const half = viewOf(events, saved('save-a', 1));
    expect(reduceView(half, { type: 'exit', code: 137 }).ending).toEqual({ kind: 'exited', code: 137 });
    expect(reduceView(half, { type: 'close' }).ending).toEqual({ kind: 'ended-early' });
  });

  it('marks what was in flight as cut off when the process ends mid-step', async () => {
    const { events } = await runDemo();
    const running = reduceView(viewOf(events, toolStarted('toolu_01')), { type: 'exit', code: 130 });
    expect(running.calls[0]?.status).toBe('cut-off');
    const returned = reduceView(viewOf(events, (e) => e.type === 'tool-finished'), { type: 'close' });
    expect(returned.calls[0]).toMatchObject({ status: 'cut-off', outcome: 'ran' });
    const asking = reduceView(viewOf(events, (e) => e.type === 'model-call'), { type: 'exit', code: 137 });
    expect(asking.modelCall).toBeNull();
  });
});

describe('on resume', () => {
  it('shows where the run stood and reuses a ledger hit', async () => {
    const run = await runDemo({ crashAfter: 'after-effect-write:3' });
    const events = await resumeDemo(run);
    const view = viewOf(events, (e) => e.type === 'reconciled');
    expect(view.resumedAt).toEqual({ turn: 3, state: 'effectRecorded', pending: ['write_report'] });
    // Where the run stood comes with the resume: tokens, ledger and the last save before it.
    expect(view.usage).toEqual({ input: 300, output: 282, cacheRead: 0, cacheWrite: 0 });
    expect(view.ledgerEntries).toBe(3);
    expect(view.lastSave).toMatchObject({ point: 'effect-write', state: 'effectRecorded' });
    expect(view.reconciled).toEqual([{ id: 'toolu_03', name: 'write_report', readOnly: false, decision: 'reused', detail: null }]);
    expect(view.calls[0]).toMatchObject({ status: 'recorded', reconciled: 'reused' });
    expect(viewOf(events).log.map((e) => e.text)).toEqual(plainOut(events).out);
  });

  it('re-runs a read-only call with no ledger entry', async () => {
    const run = await runDemo({ crashAfter: 'after-tool-return:1' });
    const events = await resumeDemo(run);
    const view = viewOf(events, toolStarted('toolu_01'));
    expect(view.reconciled.map((r) => r.decision)).toEqual(['re-ran-read-only']);
    expect(view.calls[0]).toMatchObject({ status: 'running', reconciled: 're-ran-read-only' });
  });

  it('reports an unknown side effect with its reason', async () => {
    const run = await runDemo({ crashAfter: 'after-tool-return:3' });
    const events = await resumeDemo(run, { verify: false });
    const view = viewOf(events, (e) => e.type === 'saved');
    expect(view.reconciled).toEqual([expect.objectContaining({ decision: 'unknown-reported', detail: expect.stringContaining('no result was recorded') })]);
    expect(view.calls[0]).toMatchObject({ status: 'recorded', outcome: 'unknown', reconciled: 'unknown-reported' });
  });
});
