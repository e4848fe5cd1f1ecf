/** The live view's text, without ink. */
import { describe, expect, it } from 'vitest';
import {
  activityText,
  barWidth,
  callStatusText,
  checkpointName,
  endingText,
  formatCost,
  formatDuration,
  progressBar,
  RECONCILE_LABELS,
  runIdText,
  showsResumeHint,
  spinnerFrame,
} from '../../src/tui/format.ts';
import { initialView, reduceView, type CallLine, type RunView } from '../../src/tui/run-view.ts';
import type { RunResult } from '../../src/core/run-events.ts';
import { SETTINGS } from './demo-events.ts';

const call = (over: Partial<CallLine> = {}): CallLine => ({
  id: 'toolu_01',
  name: 'read_notes',
  readOnly: true,
  status: 'waiting',
  startedAt: null,
  ms: null,
  outcome: null,
  reconciled: null,
  ...over,
});

const view = (over: Partial<RunView> = {}): RunView => ({ ...initialView(SETTINGS), ...over });

const result = (over: Partial<RunResult> = {}): RunResult => ({
  runId: 'r',
  status: 'done',
  text: 'ok',
  failure: null,
  turn: 3,
  maxTurns: 20,
  usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 },
  ...over,
});

describe('durations, bars, spinners, money', () => {
  it('shows tenths of a second while short, then seconds, minutes, hours', () => {
    expect(formatDuration(0)).toBe('0.0 s');
    expect(formatDuration(-5)).toBe('0.0 s');
    expect(formatDuration(449)).toBe('0.4 s');
    expect(formatDuration(9_999)).toBe('9.9 s');
    expect(formatDuration(12_300)).toBe('12 s');
    expect(formatDuration(185_000)).toBe('3 min 05 s');
    expect(formatDuration(2 * 3_600_000 + 7 * 60_000)).toBe('2 h 07 min');
  });

  it('fills the bar in proportion and never past its width', () => {
    expect(progressBar(0, 20, 10)).toBe('░░░░░░░░░░');
    expect(progressBar(5, 20, 8)).toBe('██░░░░░░');
    expect(progressBar(20, 20, 4)).toBe('████');
    expect(progressBar(25, 20, 4)).toBe('████');
    expect(progressBar(1, 0, 3)).toBe('░░░');
  });

  it('sizes the bar to the terminal, within bounds', () => {
    expect(barWidth(100)).toBe(30);
    expect(barWidth(40)).toBe(14);
    expect(barWidth(20)).toBe(8);
  });

  it('turns the spinner with time', () => {
    expect(spinnerFrame(0)).toBe('⠋');
    expect(spinnerFrame(80)).toBe('⠙');
    expect(spinnerFrame(800)).toBe('⠋');
    expect(new Set(Array.from({ length: 10 }, (_, i) => spinnerFrame(i * 80))).size).toBe(10);
  });

  it('prints small costs with enough digits to see them', () => {
    expect(formatCost(0)).toBe('$0');
    expect(formatCost(0.00123)).toBe('$0.0012');
    expect(formatCost(0.5)).toBe('$0.500');
    expect(formatCost(12.345)).toBe('$12.35');
  });
});

describe('words for the loop', () => {
  it('names each save point by what it made durable', () => {
    expect(checkpointName('save-a')).toBe('checkpoint A');
    expect(checkpointName('save-b')).toBe('checkpoint B');
    expect(checkpointName('effect-write')).toBe('ledger entry');
    expect(checkpointName('save-start')).toBe('run created');
  });

  it('has a label for every reconcile decision, the unknown side effect as a warning', () => {
    expect(Object.keys(RECONCILE_LABELS).sort()).toEqual(['re-ran-idempotent', 're-ran-read-only', 'reused', 'unknown-reported', 'verified-done', 'verified-not-done-ran']);
    expect(RECONCILE_LABELS['unknown-reported'].tone).toBe('warn');
    expect(RECONCILE_LABELS.reused.text).toContain('not re-run');
  });

  it('says where a call stands', () => {
    expect(callStatusText(call(), 0)).toBe('waiting');
    expect(callStatusText(call({ status: 'running', startedAt: 1_000 }), 1_450)).toBe('running 0.4 s');
    expect(callStatusText(call({ status: 'returned', outcome: 'ran', ms: 300 }), 0)).toBe('ran in 0.3 s, writing its ledger entry');
    expect(callStatusText(call({ status: 'recorded', outcome: 'ran', ms: 300 }), 0)).toBe('ran in 0.3 s, in the ledger');
    expect(callStatusText(call({ status: 'recorded', outcome: 'threw', ms: 5 }), 0)).toBe('threw in 0.0 s, in the ledger');
    expect(callStatusText(call({ status: 'recorded', reconciled: 'reused' }), 0)).toBe('reused, in the ledger (on resume)');
    expect(callStatusText(call({ status: 'recorded', outcome: 'unknown', reconciled: 'unknown-reported' }), 0)).toBe(
      'state unknown, in the ledger (on resume)',
    );
    expect(callStatusText(call({ status: 'unrecorded', outcome: 'ran', ms: 100 }), 0)).toBe('ran in 0.1 s, ledger write FAILED');
    expect(callStatusText(call({ status: 'cut-off' }), 0)).toBe('cut off while running: no result recorded');
    expect(callStatusText(call({ status: 'cut-off', outcome: 'ran', ms: 100 }), 0)).toBe('ran in 0.1 s, cut off before its ledger entry');
  });

  it('says what the process is doing', () => {
    expect(activityText(view(), 0)).toBe('starting');
    expect(activityText(view({ state: 'closed' }), 0)).toBe('about to ask the model');
    expect(activityText(view({ state: 'closed', modelCall: { turn: 1, since: 1_000 } }), 3_500)).toBe('asking the model · 2.5 s');
    expect(activityText(view({ state: 'pendingTool', calls: [call({ status: 'running', startedAt: 0 })] }), 10)).toBe('running read_notes');
    expect(activityText(view({ state: 'pendingTool', calls: [call({ status: 'returned' })] }), 10)).toBe('recording read_notes in the ledger');
    expect(activityText(view({ state: 'effectRecorded', calls: [call({ status: 'recorded' })] }), 10)).toBe('closing the turn (checkpoint B)');
    expect(activityText(view({ state: 'pendingTool', turn: 2, calls: [call()] }), 10)).toBe('about to run read_notes');
    const resumed = { state: 'pendingTool' as const, turn: 2, resumedAt: { turn: 2, state: 'pendingTool' as const, pending: ['read_notes'] } };
    expect(activityText(view({ ...resumed, calls: [call()] }), 10)).toBe('reconciling read_notes');
    expect(activityText(view({ ...resumed, calls: [call({ reconciled: 'verified-not-done-ran' })] }), 10)).toBe('about to run read_notes');
  });
});

describe('the ending', () => {
  it('is absent while the run goes on', () => {
    expect(endingText(view())).toBeNull();
    expect(showsResumeHint(view())).toBe(false);
  });

  it('states how a finished run ended, without a resume hint', () => {
    const done = view({ ending: { kind: 'finished', result: result() } });
    expect(endingText(done)).toEqual({ parts: ['✔ done', 'after 3 turns'], tone: 'good' });
    expect(showsResumeHint(done)).toBe(false);
    const stopped = view({ ending: { kind: 'finished', result: result({ status: 'stoppedAtMaxTurns', turn: 2, maxTurns: 2 }) } });
    expect(endingText(stopped)).toEqual({ parts: ['■ stopped at MAX_TURNS=2', 'after 2 turns'], tone: 'warn' });
    const failed = view({
      ending: { kind: 'finished', result: result({ status: 'failed', failure: { reason: 'refusal', message: 'The model refused.', retryable: false } }) },
    });
    expect(endingText(failed)).toEqual({ parts: ['✖ failed', 'The model refused.'], tone: 'bad' });
  });

  it('says a killed or interrupted process saved up to its last checkpoint, and offers the resume', () => {
    const base = reduceView(view(), { type: 'print', stream: 'out', text: 'x' });
    const lastSave = { point: 'save-a' as const, label: 'after-save-a:3', seq: 7, state: 'pendingTool' as const, bytes: 805, at: 0 };
    const killed = { ...base, lastSave, ending: { kind: 'exited' as const, code: 137 } };
    expect(endingText(killed)).toEqual({ parts: ['✖ killed (exit 137)', 'the run is saved up to record 7 (checkpoint A)'], tone: 'bad' });
    expect(showsResumeHint(killed)).toBe(true);
    expect(endingText({ ...killed, ending: { kind: 'exited', code: 130 } })?.parts[0]).toBe('✖ interrupted (exit 130)');
    expect(endingText({ ...killed, ending: { kind: 'ended-early' } })?.parts[0]).toBe('✖ stopped before the end (see below)');
  });
});

describe('runIdText', () => {
  it('shows a random id by its first 8 digits and an id someone gave whole, cut only past 48 characters', () => {
    expect(runIdText('92bf2062-5c1e-4d0b-9a8e-1f2d3c4b5a69')).toBe('92bf2062');
    expect(runIdText('invoice-acme')).toBe('invoice-acme');
    expect(runIdText('billing-3f9a1c2e')).toBe('billing-3f9a1c2e');
    expect(runIdText('x'.repeat(60))).toBe(`${'x'.repeat(47)}…`);
  });
});
