/**
 * What a fork writes, worked out from the parent's loaded journal alone. Pure: the stores only
 * move the records. The child's journal is the parent's records 0..SEQ, unchanged, under a
 * header of its own (a new run id, so its tools get idempotency keys of their own, and the
 * parent named in forkedFrom); with a message, one REOPEN record more that continues the
 * finished conversation, as `run --resume --message` writes it.
 */
import { randomUUID } from 'node:crypto';
import { transition } from 'xstate';
import { announcedEffectOf } from '../../machines/agent-loop.effects.ts';
import { openCalls } from '../../machines/agent-loop.logic.ts';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import { type AgentContext, type AgentStateName, type AwaitedCall, FINAL_STATES, type OutcomeKind, type PendingCall } from '../../machines/agent-loop.types.ts';
import { checkContinue, ContinueRefusedError } from '../core/continue-run.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import { type DurableView, encodeRecord, snapshotContextOf } from '../store/journal/journal-codec.ts';
import type { ForkOrigin, JournalHeader, JournalRecord } from '../store/journal/journal-record.ts';
import type { LoadedRun } from '../store/store.ts';
import { ForkRefusedError } from './fork-errors.ts';

/** A call of the parent after the fork point that ran, or may have: the child does not carry it, and it is not undone. */
export interface ParentCallAfterFork {
  tool_use_id: string;
  name: string;
  /** The input as JSON, cut short. */
  input: string;
  /** From the tools pinned in the parent's header: 'unknown' when the journal does not say. */
  effect: 'side-effect' | 'read-only' | 'unknown';
  /** What the parent recorded for it after the fork point; null: nothing (its process stopped while it ran, or before). */
  outcome: OutcomeKind | null;
  /** Open at the fork point: the child's resume settles it without the parent's result (the three rules of a resume). */
  openAtFork: boolean;
}

export interface ForkRequest {
  /** The parent's record to fork at; default: its last resting point. */
  at?: number | undefined;
  /** Continue the finished conversation at `at` with this user message. */
  message?: string | undefined;
  /** With message: the run's new MAX_TURNS (total), when no turn is left. */
  maxTurns?: number | undefined;
}

export interface ForkPlan {
  at: number;
  /** The parent's last record. */
  lastSeq: number;
  header: JournalHeader;
  records: JournalRecord[];
  /** Where the child stands once written (a resume goes on from there). */
  state: AgentStateName;
  /** The child's turn, and the call it waits on for a person (if it does), once written. */
  turn: number;
  awaiting: AwaitedCall | null;
  /** Calls open at the fork point: the child's resume reconciles them. */
  openCalls: PendingCall[];
  afterFork: ParentCallAfterFork[];
}

/** Outcome kinds of a call that did not run: nothing happened in the world. */
const NOT_RUN: readonly OutcomeKind[] = ['rejected', 'denied', 'answered'];

/**
 * The states a fork goes on from by default: between turns (the next effect the machine announces
 * is a model call for the next reply), or finished in a way a resume or a message can take up.
 * Any other state (one that runs tools, waits for a person or compacts, one a later release adds,
 * a run that was cancelled, whose resume is refused) is never picked by default: the resting point
 * before it is.
 */
function isRestingState(state: AgentStateName, context: AgentContext): boolean {
  if (FINAL_STATES.includes(state)) return state !== 'cancelled';
  return announcedEffectOf(state, context) === 'requestModelReply';
}

/**
 * A resting point: no call is open or waits for a person, and no reply is on its way to being
 * recorded (a MODEL_USAGE record counts a reply that checkpoint A has not saved yet).
 */
export function isRestingPoint(record: JournalRecord, context: AgentContext): boolean {
  return isRestingState(record.state, context) && record.event !== 'MODEL_USAGE' && context.pending.length === 0 && context.awaiting === null;
}

export function planFork(parentLocation: string, loaded: LoadedRun, request: ForkRequest, now = Date.now(), fleetRun?: string): ForkPlan {
  const lastSeq = loaded.records.length - 1;
  let lastResting = -1;
  let lastDone = -1;
  foldJournal(parentLocation, loaded, (view, stored) => {
    if (isRestingPoint(stored.record, view.context)) lastResting = stored.record.seq;
    if (view.state === 'done') lastDone = stored.record.seq;
  });
  const at = request.at ?? lastResting;
  if (!Number.isSafeInteger(at) || at < 0 || at > lastSeq) {
    throw new ForkRefusedError(parentLocation, 'no-such-record', `record ${String(at)} does not exist: the run has records 0 to ${lastSeq}. Give --at one of them (durable-agent history lists them).`);
  }
  const taken = loaded.records.slice(0, at + 1);
  const view = foldJournal(parentLocation, { ...loaded, records: taken });
  const context = snapshotContextOf(view);
  const records = taken.map((stored) => stored.record);
  // A fork point inside an atomic unit (appendBatch) ends the unit there: the copy must not promise records it lacks.
  const cut = records[records.length - 1]!;
  if (cut.more !== undefined) {
    const { more: _more, ...whole } = cut;
    records[records.length - 1] = whole;
  }
  let state = view.state;
  if (request.message !== undefined) {
    const maxTurns = request.maxTurns ?? context.maxTurns;
    checkForkMessage(parentLocation, request.message, at, view, request.maxTurns, lastDone);
    const continued = continuedContextOf(view, context, request.message, maxTurns);
    state = 'awaitingModel';
    records.push(
      encodeRecord(view, {
        seq: at + 1,
        at: now,
        event: 'REOPEN',
        state,
        context: continued,
        note: { reopened: { maxTurns, previousState: view.state }, continued: { turn: context.turn } },
      }),
    );
  }
  const parent = loaded.header;
  const forkedFrom: ForkOrigin = { runId: parent.runId, seq: at, location: parentLocation, at: now, ...(fleetRun ? { fleetRun } : {}) };
  const header: JournalHeader = {
    format: parent.format,
    version: parent.version,
    runId: randomUUID(),
    createdAt: now,
    ...(parent.startedBy ? { startedBy: parent.startedBy } : {}),
    // The child goes on with the agent the parent was driven by, and only with it (as a resume of the parent would).
    ...(parent.agent ? { agent: parent.agent } : {}),
    ...(parent.decisionPolicy ? { decisionPolicy: parent.decisionPolicy } : {}),
    // The child's records hold what the parent's compaction made (compaction blocks, summaries): it goes on the same way.
    ...(parent.compaction ? { compaction: parent.compaction } : {}),
    ...(parent.clearToolUses ? { clearToolUses: parent.clearToolUses } : {}),
    // The child asks its model the way the parent did, and prices it the same.
    ...(parent.request ? { request: parent.request } : {}),
    ...(parent.price ? { price: parent.price } : {}),
    // A sealed parent's child is sealed too: its store seals it under a run key of its own (the
    // parent's content opened, sealed again for the child's id), or refuses it without keys.
    ...(parent.sealed ? { sealed: parent.sealed } : {}),
    forkedFrom,
  };
  const open = openCalls(context);
  return { at, lastSeq, header, records, state, turn: context.turn, awaiting: context.awaiting, openCalls: open, afterFork: callsAfter(parentLocation, loaded, at, open) };
}

/** The child's context after the machine's REOPEN with the message (checkContinue has held it to the machine's guard). */
function continuedContextOf(view: DurableView, context: AgentContext, message: string, maxTurns: number): AgentContext {
  const [next] = transition(agentLoopMachine, agentLoopMachine.resolveState({ value: view.state, context }), { type: 'REOPEN', maxTurns, message });
  if (next.value !== 'awaitingModel') throw new Error(`the machine did not take REOPEN with a message in ${view.state}`);
  return next.context;
}

function checkForkMessage(location: string, message: string, at: number, view: DurableView, maxTurns: number | undefined, lastDone: number): void {
  try {
    checkContinue(location, message, view.state, view.context, maxTurns);
  } catch (error) {
    if (!(error instanceof ContinueRefusedError) || error.problem === 'empty') throw error;
    if (error.problem === 'no-turns-left') throw new ForkRefusedError(location, 'message-not-allowed', `${error.message.replace(/ Nothing was written\.$/, '')} Nothing was written.`);
    const where = lastDone >= 0 ? `the last such record is ${lastDone} (fork --at ${lastDone} --message …)` : 'this run has none: fork without --message and resume the fork';
    throw new ForkRefusedError(
      location,
      'message-not-allowed',
      `record ${at} is not a finished conversation (state ${view.state}): --message is taken only at a record where the model ended its turn (state done); ${where}. Nothing was written.`,
    );
  }
}

/** The calls of the parent after the fork point that ran or may have (read from its records after `at`). */
function callsAfter(location: string, loaded: LoadedRun, at: number, openAtFork: readonly PendingCall[]): ParentCallAfterFork[] {
  const traits = loaded.header.startedBy?.toolAnnotations;
  const calls = new Map<string, ParentCallAfterFork>();
  const note = (call: PendingCall, open: boolean) => {
    if (calls.has(call.id)) return;
    const pinned = traits?.[call.name];
    calls.set(call.id, {
      tool_use_id: call.id,
      name: call.name,
      input: summary(call.input),
      effect: pinned ? (pinned.readOnly ? 'read-only' : 'side-effect') : 'unknown',
      outcome: null,
      openAtFork: open,
    });
  };
  for (const call of openAtFork) note(call, true);
  const end = foldJournal(location, loaded, (view, stored) => {
    if (stored.record.seq <= at) return;
    for (const call of view.context.pending) note(call, false);
    for (const entry of stored.record.results?.add ?? []) {
      const call = calls.get(entry.tool_use_id);
      if (call) call.outcome = entry.kind;
    }
  });
  // Calls run one at a time, in order, after their decision: of those still open where the
  // parent stopped, only the first can have started, and only when it was not waiting for a person.
  const running = end.state === 'pendingTool' || end.state === 'effectRecorded' ? openCalls(end.context)[0]?.id : undefined;
  return [...calls.values()].filter((call) => (call.outcome === null ? call.tool_use_id === running : !NOT_RUN.includes(call.outcome)));
}

const SUMMARY_CHARS = 80;

function summary(input: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(input) ?? 'undefined';
  } catch {
    text = String(input);
  }
  return text.length > SUMMARY_CHARS ? `${text.slice(0, SUMMARY_CHARS - 1)}…` : text;
}
