/**
 * The live view's state, folded from the run's events: pure, so every frame the TUI draws can
 * be rebuilt from an event list in a test. The permanent log carries exactly the plain lines
 * (plainLine / detailLine), so nothing the plain output says is missing from the terminal.
 */
import type { AgentStateName, Budget, DecisionNeed, OutcomeKind, TokenUsage } from '../../machines/agent-loop.types.ts';
import { ZERO_USAGE } from '../../machines/agent-loop.types.ts';
import type { DecisionCommands } from '../words/decision-lines.ts';
import { EN } from '../lang/en.ts';
import type { LessonWords } from '../lang/lesson-words.ts';
import { commandLines, detailLine, plainLine, replyLines } from '../words/run-lines.ts';
import type { StreamDelta } from '../model/model.ts';
import type { CallView, RunEvent, RunResult } from '../core/run-events.ts';
import type { ReconcileOutcomeName } from '../store/journal/journal-record.ts';
import type { PointName } from '../store/journal/record-points.ts';
import { redactSecrets } from '../util/redact.ts';

/**
 * Where one call of the turn stands. waiting: not started; running; returned: the tool is done,
 * its ledger entry not yet durable; recorded: in the ledger; unrecorded: it ran but the ledger
 * write failed; cut-off: the process ended while it was running or before its entry was written.
 */
export type CallStatus = 'waiting' | 'running' | 'returned' | 'recorded' | 'unrecorded' | 'cut-off';

export interface CallLine {
  id: string;
  name: string;
  readOnly: boolean | null;
  status: CallStatus;
  startedAt: number | null;
  ms: number | null;
  outcome: OutcomeKind | null;
  /** How a resume settled it, when it did. */
  reconciled: ReconcileOutcomeName | null;
}

export interface ReconcileLine {
  id: string;
  name: string;
  readOnly: boolean | null;
  decision: ReconcileOutcomeName;
  detail: string | null;
}

export interface LastSave {
  point: PointName;
  label: string;
  seq: number;
  state: AgentStateName;
  bytes: number;
  at: number;
}

export type LogTone = 'save-a' | 'save-b' | 'resume' | 'reconcile' | 'done' | 'stopped' | 'failed' | 'detail' | 'alert' | 'notice';

export interface LogEntry {
  id: number;
  text: string;
  tone: LogTone;
}

/**
 * How the run view ended: the run finished (done, stopped, failed); the process is exiting
 * without a finish (a simulated kill, Ctrl-C); or the command ended early on an error.
 */
export type Ending = { kind: 'finished'; result: RunResult } | { kind: 'exited'; code: number } | { kind: 'ended-early' };

export interface RunView {
  verbose: boolean;
  /** The command line that resumes this run, shown when the process stops before the end. */
  resumeHint: string;
  /** The commands that decide a waiting call, shown under its line. */
  decisionCommands: DecisionCommands | null;
  /** The language of the lesson's lines in the log. */
  words: LessonWords;
  runId: string | null;
  task: string | null;
  model: string | null;
  location: string | null;
  /** Where the run stood when this process picked it up. */
  resumedAt: { turn: number; state: AgentStateName; pending: string[] } | null;
  state: AgentStateName | null;
  turn: number;
  maxTurns: number;
  calls: CallLine[];
  reconciled: ReconcileLine[];
  /** Null until the run's first event says them. */
  usage: TokenUsage | null;
  /** A run with a budget: its limits, and its cost so far while it has a cost budget. */
  budget: Budget | null;
  costUsd: number | null;
  ledgerEntries: number | null;
  lastSave: LastSave | null;
  /** What this process appended to the journal. */
  written: { records: number; bytes: number };
  /** Set while a model call is out. */
  modelCall: { turn: number; since: number } | null;
  /** The reply as it streams in, while the model call is out (nothing of it is recorded). */
  reply: StreamingReply | null;
  /**
   * Lines not yet written above the live view. Once ink's <Static> has written them (the
   * 'written' action), they are dropped: a run of 100,000 turns must not keep every line.
   */
  log: LogEntry[];
  /** Lines written above the live view and dropped from `log`; the next line's id follows them. */
  logWritten: number;
  ending: Ending | null;
  /** The call the run waits on for a person's decision, for the prompt; null when none waits. */
  prompt: PromptCall | null;
  /** The run has waited for a person's decision (the state row then shows awaitingDecision). */
  asked: boolean;
}

/**
 * A reply streaming in: its text so far, its thinking (counted, not kept: the view shows it
 * collapsed), the tool calls it names with their input so far (`server`: one Anthropic's servers run).
 */
export interface StreamingReply {
  text: string;
  thinking: Array<{ index: number; characters: number; redacted: boolean }>;
  tools: Array<{ index: number; id: string; name: string; input: string; server?: true }>;
  /** Times the stream broke off and the request was sent again (what came before is dropped). */
  restarts: number;
}

/** A call that waits for a decision, as the live view's prompt shows it. */
export interface PromptCall {
  id: string;
  name: string;
  input: unknown;
  needs: DecisionNeed;
  question: string | null;
  /** When the call began to wait (its DECISION_NEEDED record): the view shows how long it has waited. */
  since: number;
}

export type ViewAction =
  | { type: 'event'; event: RunEvent; at: number }
  /** A line the command prints itself (the [kill] line, the interrupt notice). */
  | { type: 'print'; stream: 'out' | 'err'; text: string }
  /** The process is exiting now (process.exit from a crash or interrupt handler). */
  | { type: 'exit'; code: number }
  /** The command is done with the run view. */
  | { type: 'close' }
  /** The lines of `log` are on the screen now (drawn above the live view): the view lets go of them. */
  | { type: 'written' };

export interface ViewSettings {
  verbose: boolean;
  resumeHint: string;
  /** The task, when the command knows it before the run's first event. */
  task: string | null;
  decisionCommands?: DecisionCommands | null | undefined;
  /** The language of the lesson's lines in the log (default: English). */
  words?: LessonWords | undefined;
}

export function initialView(settings: ViewSettings): RunView {
  return {
    verbose: settings.verbose,
    resumeHint: settings.resumeHint,
    decisionCommands: settings.decisionCommands ?? null,
    words: settings.words ?? EN,
    runId: null,
    task: settings.task,
    model: null,
    location: null,
    resumedAt: null,
    state: null,
    turn: 0,
    maxTurns: 0,
    calls: [],
    reconciled: [],
    usage: null,
    budget: null,
    costUsd: null,
    ledgerEntries: null,
    lastSave: null,
    written: { records: 0, bytes: 0 },
    modelCall: null,
    reply: null,
    log: [],
    logWritten: 0,
    ending: null,
    prompt: null,
    asked: false,
  };
}

export function reduceView(view: RunView, action: ViewAction): RunView {
  switch (action.type) {
    case 'event':
      return logEvent(applyEvent(view, action.event, action.at), action.event);
    case 'print':
      return appendLog(view, action.text, action.stream === 'out' ? 'notice' : 'alert');
    case 'exit':
      return view.ending ? view : { ...cutOff(view), ending: { kind: 'exited', code: action.code } };
    case 'close':
      return view.ending ? view : { ...cutOff(view), ending: { kind: 'ended-early' } };
    case 'written':
      return view.log.length === 0 ? view : { ...view, log: [], logWritten: view.logWritten + view.log.length };
  }
}

function applyEvent(view: RunView, event: RunEvent, at: number): RunView {
  switch (event.type) {
    case 'started':
      return {
        ...view,
        runId: event.runId,
        task: event.task,
        model: event.model,
        location: event.location,
        maxTurns: event.maxTurns,
        state: 'awaitingModel',
        usage: ZERO_USAGE,
        ledgerEntries: 0,
      };
    case 'resumed':
      return {
        ...view,
        runId: event.runId,
        model: event.model,
        location: event.location,
        state: event.state,
        turn: event.turn,
        maxTurns: event.maxTurns,
        resumedAt: { turn: event.turn, state: event.state, pending: event.pending.map((call) => call.name) },
        calls: event.pending.map((call) => newCall(call, 'waiting')),
        task: event.task,
        usage: event.usage,
        ledgerEntries: event.ledgerEntries,
        lastSave: { ...event.lastSave, label: 'before the resume', state: event.state },
      };
    case 'reopened':
      return { ...view, maxTurns: event.maxTurns };
    case 'lock-taken-over':
    case 'model-notice':
      return view;
    case 'attached':
      return { ...view, runId: event.runId };
    case 'reconciled':
      return {
        ...view,
        reconciled: [
          ...view.reconciled,
          {
            id: event.call.id,
            name: event.call.name,
            readOnly: event.call.readOnly,
            decision: event.decision,
            detail: event.detail === null ? null : redactSecrets(event.detail),
          },
        ],
        calls: updateCall(view.calls, event.call, (call) => ({
          ...call,
          reconciled: event.decision,
          // A ledger hit is durable already; every other decision is followed by its own ledger write.
          status: event.decision === 'reused' ? 'recorded' : call.status,
          outcome: event.decision === 'unknown-reported' ? 'unknown' : event.decision === 'verified-done' ? 'verified' : call.outcome,
        })),
      };
    case 'saved':
      return {
        ...view,
        state: event.state,
        turn: event.turn,
        maxTurns: event.maxTurns,
        usage: event.usage,
        budget: event.budget ?? view.budget,
        costUsd: event.costUsd ?? view.costUsd,
        ledgerEntries: event.ledgerEntries,
        lastSave: durable(event) ? { point: event.point, label: event.label, seq: event.seq, state: event.state, bytes: event.bytes, at: event.at } : view.lastSave,
        written: { records: view.written.records + 1, bytes: view.written.bytes + event.bytes },
        calls: callsAfterSave(view.calls, event),
      };
    case 'model-call':
      return { ...view, modelCall: { turn: event.turn, since: at }, reply: null };
    case 'model-stream':
      return { ...view, reply: withDelta(view.reply ?? NO_REPLY, event.delta) };
    case 'model-reply':
      return { ...view, modelCall: null, reply: null };
    case 'tool-started':
      return { ...view, calls: updateCall(view.calls, event.call, (call) => ({ ...call, status: 'running', startedAt: event.at, ms: null })) };
    case 'tool-finished':
      return {
        ...view,
        calls: updateCall(view.calls, event.call, (call) => ({ ...call, status: 'returned', ms: event.ms, outcome: event.outcome.kind })),
      };
    case 'ledger-write-failed':
      return { ...view, calls: updateCall(view.calls, event.call, (call) => ({ ...call, status: 'unrecorded' })) };
    case 'finished': {
      const { budget = view.budget, costUsd = view.costUsd } = event.result;
      return { ...view, budget, costUsd, modelCall: null, reply: null, prompt: null, ending: { kind: 'finished', result: withoutSecrets(event.result) } };
    }
    // Both are logged with the plain output's lines (logEvent), the commands that decide it included.
    case 'waiting':
      return { ...view, asked: true, prompt: { id: event.call.id, name: event.call.name, input: event.call.input, needs: event.needs, question: event.question, since: event.since } };
    case 'decided':
      return view.prompt?.id === event.call.id ? { ...view, prompt: null } : view;
    // A call that waits for its child is never run here: its child's queueing changes nothing on screen.
    case 'child-queueing':
    case 'child-queued':
      return view;
  }
}

export const NO_REPLY: StreamingReply = { text: '', thinking: [], tools: [], restarts: 0 };

function withDelta(reply: StreamingReply, delta: StreamDelta): StreamingReply {
  switch (delta.type) {
    case 'text':
      return { ...reply, text: reply.text + delta.text };
    case 'thinking': {
      const known = reply.thinking.some((block) => block.index === delta.index);
      const thinking = known ? reply.thinking : [...reply.thinking, { index: delta.index, characters: 0, redacted: false }];
      return { ...reply, thinking: thinking.map((block) => (block.index === delta.index ? { ...block, characters: block.characters + delta.text.length } : block)) };
    }
    case 'redacted-thinking':
      return { ...reply, thinking: [...reply.thinking, { index: delta.index, characters: 0, redacted: true }] };
    case 'tool-use':
      return { ...reply, tools: [...reply.tools, { index: delta.index, id: delta.id, name: delta.name, input: '' }] };
    case 'server-tool-use':
      return { ...reply, tools: [...reply.tools, { index: delta.index, id: delta.id, name: delta.name, input: '', server: true }] };
    case 'tool-input':
      return { ...reply, tools: reply.tools.map((tool) => (tool.index === delta.index ? { ...tool, input: tool.input + delta.partialJson } : tool)) };
    case 'restart':
      return { ...NO_REPLY, restarts: reply.restarts + 1 };
  }
}

/**
 * A reply's token count, written without waiting for the disk, is not shown as the last safe
 * point. A turn's last ledger entry is, though written the same way: a kill keeps it, and
 * checkpoint B, written right after it, makes it durable with its own fsync.
 */
function durable(event: Extract<RunEvent, { type: 'saved' }>): boolean {
  return event.durable || event.point === 'effect-write';
}

/** A checkpoint A opens a new list of calls; the ledger writes after it mark them recorded. */
function callsAfterSave(calls: readonly CallLine[], event: Extract<RunEvent, { type: 'saved' }>): CallLine[] {
  if (event.point === 'save-a') return event.pending.map((call) => newCall(call, 'waiting'));
  const known = new Map(calls.map((call) => [call.id, call]));
  // After a resume into a turn, the first save may name calls this view has not seen yet.
  const base = event.pending.length > 0 ? event.pending.map((call) => known.get(call.id) ?? newCall(call, 'waiting')) : [...calls];
  const recorded = new Set(event.recordedIds);
  return base.map((call) => (recorded.has(call.id) && call.status !== 'unrecorded' ? { ...call, status: 'recorded' } : call));
}

/** The process ends here: nothing is in flight any more, and what was in flight has no entry. */
function cutOff(view: RunView): RunView {
  const inFlight = (call: CallLine) => call.status === 'running' || call.status === 'returned';
  return { ...view, modelCall: null, reply: null, calls: view.calls.map((call) => (inFlight(call) ? { ...call, status: 'cut-off' } : call)) };
}

function newCall(call: CallView, status: CallStatus): CallLine {
  return { id: call.id, name: call.name, readOnly: call.readOnly, status, startedAt: null, ms: null, outcome: null, reconciled: null };
}

function updateCall(calls: readonly CallLine[], target: CallView, change: (call: CallLine) => CallLine): CallLine[] {
  const found = calls.some((call) => call.id === target.id);
  const list = found ? calls : [...calls, newCall(target, 'waiting')];
  return list.map((call) => (call.id === target.id ? change(call) : call));
}

function logEvent(view: RunView, event: RunEvent): RunView {
  let next = view;
  const line = plainLine(event, view.words);
  if (line !== null) next = appendLog(next, line, toneOf(event));
  // A reply's thinking and server tool calls, one dim line each, as the plain output prints them.
  for (const block of replyLines(event)) next = appendLog(next, block, 'detail');
  for (const hint of commandLines(event, view.decisionCommands)) next = appendLog(next, hint, 'notice');
  const detail = detailLine(event, view.verbose);
  if (detail !== null) next = appendLog(next, detail, event.type === 'ledger-write-failed' ? 'alert' : 'detail');
  return next;
}

function toneOf(event: RunEvent): LogTone {
  switch (event.type) {
    case 'saved':
      return event.point === 'save-a' ? 'save-a' : 'save-b';
    case 'resumed':
      return 'resume';
    case 'reconciled':
      return 'reconcile';
    case 'waiting':
      return 'stopped';
    case 'decided':
      return 'notice';
    case 'finished':
      return event.result.status === 'done' ? 'done' : event.result.status === 'failed' ? 'failed' : 'stopped';
    default:
      return 'detail';
  }
}

/** Every line the view shows goes through here: no secret is drawn (see redactSecrets). */
function appendLog(view: RunView, text: string, tone: LogTone): RunView {
  return { ...view, log: [...view.log, { id: view.logWritten + view.log.length, text: redactSecrets(text), tone }] };
}

/** The failure message is drawn under the view when the run ends. */
function withoutSecrets(result: RunResult): RunResult {
  return result.failure ? { ...result, failure: { ...result.failure, message: redactSecrets(result.failure.message) } } : result;
}
