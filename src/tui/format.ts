/** Pure text for the live view: every string it shows is made here and tested without ink. */
import { budgetReachedWords, largerBudgetWords } from '../budget/budget-words.ts';
import type { AgentStateName } from '../../machines/agent-loop.types.ts';
import { requestWords } from '../control/control-request.ts';
import { characters } from '../words/block-words.ts';
import { formatElapsed as formatDuration } from '../words/format.ts';
import { waitsForWords } from '../awaits/wait-words.ts';
import type { ReconcileOutcomeName } from '../store/journal/journal-record.ts';
import type { PointName } from '../store/journal/record-points.ts';
import type { CallLine, RunView, StreamingReply } from './run-view.ts';

/**
 * The loop's working states, in the order a turn passes them. awaitingDecision is passed only by
 * a call that needs a person: the row shows it once the run has waited for one (`whenAsked`).
 */
export const LOOP_STATES: ReadonlyArray<{ state: AgentStateName; label: string; whenAsked?: true }> = [
  { state: 'awaitingModel', label: 'awaitingModel' },
  { state: 'pendingTool', label: 'pendingTool (A)' },
  { state: 'awaitingDecision', label: 'awaitingDecision', whenAsked: true },
  { state: 'effectRecorded', label: 'effectRecorded' },
  { state: 'closed', label: 'closed (B)' },
];

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const SPINNER_STEP_MS = 80;

/** The states the row shows: the decision state once the run is in it or has been. */
export function loopStatesShown(state: AgentStateName | null, asked: boolean): ReadonlyArray<{ state: AgentStateName; label: string }> {
  return LOOP_STATES.filter((step) => !step.whenAsked || asked || state === step.state);
}

const RANDOM_RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RUN_ID_SHOWN = 48;

/** A random run id (a UUID) by its first 8 digits; an id someone gave (`--run invoice-acme`) as it is, cut only when very long. */
export function runIdText(runId: string): string {
  if (RANDOM_RUN_ID.test(runId)) return runId.slice(0, 8);
  return runId.length > RUN_ID_SHOWN ? `${runId.slice(0, RUN_ID_SHOWN - 1)}…` : runId;
}

export function spinnerFrame(elapsedMs: number): string {
  return SPINNER[Math.floor(Math.max(0, elapsedMs) / SPINNER_STEP_MS) % SPINNER.length]!;
}

/** "0.4 s", "12 s", "3 min 05 s", "2 h 07 min": the same durations as the plain output prints. */
export { formatDuration };

/** A bar of `width` cells, filled in proportion to done/total. */
export function progressBar(done: number, total: number, width: number): string {
  const cells = Math.max(1, width);
  const filled = total > 0 ? Math.min(cells, Math.round((Math.max(0, done) / total) * cells)) : 0;
  return '█'.repeat(filled) + '░'.repeat(cells - filled);
}

/** The bar's width for a terminal: as wide as there is room for, between 8 and 30 cells. */
export function barWidth(columns: number): number {
  // label column (9) + "turn 999 of 999" (15) + spaces (2)
  return Math.max(8, Math.min(30, columns - 26));
}

export function formatCost(usd: number): string {
  if (usd === 0) return '$0';
  if (usd < 0.01) return `$${usd.toFixed(4)}`;
  if (usd < 10) return `$${usd.toFixed(3)}`;
  return `$${usd.toFixed(2)}`;
}

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** What a save point made durable, in the words of the lesson. */
export function checkpointName(point: PointName): string {
  switch (point) {
    case 'save-start':
      return 'run created';
    case 'save-a':
      return 'checkpoint A';
    case 'effect-write':
      return 'ledger entry';
    case 'save-b':
      return 'checkpoint B';
    case 'save-waiting':
      return 'waits for a decision';
    case 'save-decision':
      return 'decision';
    case 'save-pause':
      return 'pause_turn reply';
    case 'save-done':
      return 'final answer';
    case 'save-max-turns':
      return 'stop at MAX_TURNS';
    case 'save-failed':
      return 'failure';
    case 'save-reopen':
      return 'reopened run';
    case 'model-reply':
      return "reply's token count";
    case 'save-cancelled':
      return 'cancelled';
    case 'save-budget':
      return 'stop at a budget';
    case 'save-compacting':
      return 'compaction begins';
    case 'save-compacted':
      return 'context compacted';
  }
}

export function pluralize(count: number, one: string, many: string): string {
  return `${formatCount(count)} ${count === 1 ? one : many}`;
}

export type Tone = 'good' | 'redo' | 'warn';

/** How a dangling call was settled on resume, short enough for a narrow terminal. */
export const RECONCILE_LABELS: Record<ReconcileOutcomeName, { text: string; tone: Tone }> = {
  reused: { text: 'reused from the ledger, not re-run', tone: 'good' },
  're-ran-read-only': { text: 'no ledger entry, read-only: re-run', tone: 'redo' },
  're-ran-idempotent': { text: 'no ledger entry, idempotent: re-run', tone: 'redo' },
  'verified-done': { text: 'verified as done, not re-run', tone: 'good' },
  'verified-not-done-ran': { text: 'verified as not done: run now', tone: 'redo' },
  'unknown-reported': { text: 'unknown side effect: reported to the model (is_error), not re-run', tone: 'warn' },
};

export function toolKind(readOnly: boolean | null): string {
  if (readOnly === null) return 'unknown tool';
  return readOnly ? 'read-only' : 'side effect';
}

/** The status column of one call of the turn. */
export function callStatusText(call: CallLine, now: number): string {
  const onResume = call.reconciled ? ' (on resume)' : '';
  switch (call.status) {
    case 'waiting':
      return 'waiting';
    case 'running':
      return `running ${formatDuration(now - (call.startedAt ?? now))}`;
    case 'returned':
      return `${outcomeText(call)}, writing its ledger entry`;
    case 'recorded':
      return `${call.reconciled === 'reused' ? 'reused' : outcomeText(call)}, in the ledger${onResume}`;
    case 'unrecorded':
      return `${outcomeText(call)}, ledger write FAILED`;
    case 'cut-off':
      return call.outcome === null ? 'cut off while running: no result recorded' : `${outcomeText(call)}, cut off before its ledger entry`;
  }
}

function outcomeText(call: CallLine): string {
  const took = call.ms !== null ? ` in ${formatDuration(call.ms)}` : '';
  switch (call.outcome) {
    case null:
      return 'recorded';
    case 'ran':
      return `ran${took}`;
    case 'threw':
      return `threw${took}`;
    case 'timed-out':
      return `timed out${took}`;
    case 'rejected':
      return 'rejected';
    case 'verified':
      return 'verified';
    case 'unknown':
      return 'state unknown';
    case 'denied':
      return 'denied';
    case 'answered':
      return 'answered';
  }
}

/** What the process is doing right now, for the "now" row. */
export function activityText(view: RunView, now: number): string {
  if (view.modelCall) return `asking the model · ${formatDuration(now - view.modelCall.since)}`;
  if (view.prompt) {
    const since = formatDuration(now - view.prompt.since);
    if (view.prompt.needs === 'wait') return `${view.prompt.name} ${view.prompt.id} waits for ${waitsForWords(view.prompt)} · ${since}`;
    const what = view.prompt.needs === 'answer' ? "a person's answer to" : "a person's decision on";
    return `waiting for ${what} ${view.prompt.name} ${view.prompt.id} · ${since}`;
  }
  const running = view.calls.find((call) => call.status === 'running');
  if (running) return `running ${running.name}`;
  const returned = view.calls.find((call) => call.status === 'returned');
  if (returned) return `recording ${returned.name} in the ledger`;
  const waiting = view.calls.find((call) => call.status === 'waiting');
  if (waiting) {
    // In the turn a resume picked up, a call without a decision yet is being reconciled (verify may take a while).
    const reconciling = view.resumedAt?.turn === view.turn && waiting.reconciled === null;
    return reconciling ? `reconciling ${waiting.name}` : `about to run ${waiting.name}`;
  }
  if (view.state === 'pendingTool' || view.state === 'effectRecorded') return 'closing the turn (checkpoint B)';
  if (view.state === null) return 'starting';
  if (view.state === 'closed' || view.state === 'awaitingModel') return 'about to ask the model';
  return 'finishing';
}

/** How the view ended, in parts (the first is the verdict); null while the run goes on. */
export function endingText(view: RunView): { parts: string[]; tone: 'good' | 'warn' | 'bad' } | null {
  const ending = view.ending;
  if (!ending) return null;
  switch (ending.kind) {
    case 'finished': {
      const { result } = ending;
      const turns = `after ${pluralize(result.turn, 'turn', 'turns')}`;
      if (result.status === 'done') return { parts: ['✔ done', turns], tone: 'good' };
      if (result.status === 'stoppedAtMaxTurns') return { parts: [`■ stopped at MAX_TURNS=${result.maxTurns}`, turns], tone: 'warn' };
      if (result.status === 'stoppedAtBudget') {
        const stop = result.budgetStop;
        const more = stop ? `resume with --resume ${largerBudgetWords(stop).join(' ')}` : 'resume with a larger budget';
        return { parts: [`■ ${stop ? budgetReachedWords(stop) : 'budget reached'} (exit 8)`, turns, more], tone: 'warn' };
      }
      if (result.status === 'waiting') {
        const calls = (result.waiting ?? []).map((call) => `${call.name} ${call.tool_use_id}`).join(', ');
        if ((result.waiting ?? []).some((call) => call.awaited && call.needs === 'wait')) {
          return { parts: ['‖ waiting for its time or its event (exit 7)', calls, 'resume with --resume (before then, it waits the rest)'], tone: 'warn' };
        }
        return { parts: ['‖ waiting for a person (exit 7)', calls, 'decide it (approve, deny, answer), then resume'], tone: 'warn' };
      }
      if (result.status === 'cancelled') return { parts: ['✖ cancelled (exit 9)', result.cancellation ? requestWords(result.cancellation) : ''], tone: 'bad' };
      return { parts: ['✖ failed', result.failure?.message ?? 'the run failed'], tone: 'bad' };
    }
    case 'exited': {
      const how = ending.code === 137 ? 'killed' : ending.code === 130 ? 'interrupted' : 'stopped';
      return { parts: [`✖ ${how} (exit ${ending.code})`, savedUpTo(view)], tone: 'bad' };
    }
    case 'ended-early':
      return { parts: ['✖ stopped before the end (see below)', savedUpTo(view)], tone: 'bad' };
  }
}

function savedUpTo(view: RunView): string {
  return view.lastSave
    ? `the run is saved up to record ${view.lastSave.seq} (${checkpointName(view.lastSave.point)})`
    : 'the run is saved up to its last checkpoint';
}

/** Whether a resume command is worth showing: the run stopped and can go on. */
export function showsResumeHint(view: RunView): boolean {
  const ending = view.ending;
  if (!ending) return false;
  return ending.kind !== 'finished';
}

/** Lines of the streamed reply's text the live view keeps on screen (the newest). */
export const REPLY_TEXT_LINES = 3;

/**
 * The reply streaming in, as the live view shows it: the newest lines of its text, then each
 * tool call it names with its input so far. A line wider than `width` keeps its end, the part
 * that just arrived.
 */
export function replyLines(reply: StreamingReply, width: number): string[] {
  const fit = (line: string) => (line.length <= width ? line : `…${line.slice(line.length - width + 1)}`);
  const text = reply.text.split('\n').filter((line, i, all) => line.trim() !== '' || i === all.length - 1);
  const lines = text.slice(-REPLY_TEXT_LINES).filter((line) => line !== '').map(fit);
  for (const tool of reply.tools) lines.push(fit(`→ ${tool.name}${tool.server ? ' (server tool)' : ''} ${tool.input}`));
  if (reply.restarts > 0) lines.push(`(the stream broke off; asked again${reply.restarts > 1 ? `, ${reply.restarts} times` : ''})`);
  return lines;
}

/**
 * The reply's thinking so far, collapsed to one line (the view draws it dim): its length grows
 * as it streams; its text is not shown (the [thinking] line above the view has its first words
 * once the reply is whole). Null when the reply has no thinking.
 */
export function replyThinkingLine(reply: StreamingReply): string | null {
  if (reply.thinking.length === 0) return null;
  const plain = reply.thinking.filter((block) => !block.redacted);
  const redacted = reply.thinking.length - plain.length;
  const parts: string[] = [];
  if (plain.length > 0) {
    const count = characters(plain.reduce((sum, block) => sum + block.characters, 0));
    parts.push(plain.length === 1 ? `thinking (${count})` : `thinking (${plain.length} blocks, ${count})`);
  }
  if (redacted > 0) parts.push(redacted === 1 ? 'redacted thinking' : `redacted thinking (${redacted} blocks)`);
  return parts.join(' · ');
}
