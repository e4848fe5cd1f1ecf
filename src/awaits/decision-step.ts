/**
 * The `awaitDecision` effect: find the decision for the call the run waits on. In order: the
 * store's inbox (a decision given from elsewhere, perhaps while no process ran, if given before
 * the deadline), the deadline (a call undecided past it is denied), then — the run now waits,
 * and says so — the program's onDecision handler, then, when the
 * run may wait, the inbox again every DECISION_POLL_MS until a decision or the deadline comes.
 * Nothing here writes the journal: the driver turns what it returns into a DECISION record and
 * settles the inbox entry once that record is durable.
 */
import { decisionFor, verdictFits } from '../../machines/agent-loop.logic.ts';
import type { AgentContext, Decision, DecisionNeed, PendingCall, ToolOutcome } from '../../machines/agent-loop.types.ts';
import type { DecisionInbox } from '../store/store.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';
import { questionOf } from './ask-user.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** A waiting run looks at its inbox this often (a decision given elsewhere is taken within a second). */
export const DECISION_POLL_MS = 250;

/** What an onDecision handler is asked. */
export interface DecisionRequest {
  runId: string;
  tool_use_id: string;
  name: string;
  input: unknown;
  needs: DecisionNeed;
  /** The ask_user question, for needs 'answer'. */
  question: string | null;
  /** When the call began to wait (epoch ms). */
  since: number;
}

/** What an onDecision handler answers; `by` defaults to 'api'. */
export type DecisionReply =
  | { verdict: 'approved'; input?: unknown; note?: string | undefined; by?: string | undefined }
  | { verdict: 'denied'; reason: string; note?: string | undefined; by?: string | undefined }
  | { verdict: 'answered'; text: string; note?: string | undefined; by?: string | undefined };

/** Returns a decision, or null to leave it to the inbox (and to waiting, when the run may wait). */
export type DecisionHandler = (request: DecisionRequest) => Promise<DecisionReply | null> | DecisionReply | null;

export interface DecisionOptions {
  onDecision?: DecisionHandler | undefined;
  /** False: a run with no decision at hand stops (status 'waiting') instead of waiting. Default true. */
  wait?: boolean | undefined;
  /** Deny what is undecided this long after it began to wait (counted from its DECISION_NEEDED record). */
  decisionTimeoutMs?: number | undefined;
}

/** A decision handler's answer cannot be used for the call it was asked about. */
export class DecisionReplyError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'DecisionReplyError';
  constructor(
    readonly tool_use_id: string,
    readonly problem: string,
  ) {
    super(`The onDecision handler's answer for ${tool_use_id} cannot be used: ${problem}. Nothing was recorded; fix the handler and resume.`);
  }
}

export interface DecisionWait {
  runId: string;
  context: AgentContext;
  inbox: DecisionInbox | undefined;
  registry: ToolRegistry;
  options: DecisionOptions;
  signal: AbortSignal | undefined;
  /**
   * Called once, when no decision is at hand (none in the inbox, the deadline not passed): the
   * run begins to wait for a person. Not called when a resume finds the decision already given.
   */
  onWait?: () => void;
}

/** The call the snapshot waits on. */
export function awaitedCallOf(context: AgentContext): PendingCall {
  const call = context.pending.find((pending) => pending.id === context.awaiting?.tool_use_id);
  if (!call) throw new Error(`awaitDecision announced with no awaited call (${context.awaiting?.tool_use_id ?? 'none'})`);
  return call;
}

/** The decision for the awaited call, or null when none is at hand and the run is not to wait (or was asked to stop). */
export async function findDecision(wait: DecisionWait): Promise<Decision | null> {
  const { context, options } = wait;
  const call = awaitedCallOf(context);
  const since = context.awaiting!.since;
  const deadline = options.decisionTimeoutMs === undefined ? Number.POSITIVE_INFINITY : since + options.decisionTimeoutMs;
  const expired = () => deadlineDecision(call, options.decisionTimeoutMs!, deadline);
  // A decision given before the deadline wins even when it is read after it (a run that stopped
  // and is resumed late); one given after the deadline comes too late.
  const inTime = (found: Decision | null) => (found && found.at < deadline ? found : null);
  const inboxed = inTime(await fromInbox(wait, call));
  if (inboxed) return inboxed;
  if (Date.now() >= deadline) return expired();
  wait.onWait?.();
  if (options.onDecision) {
    const reply = await options.onDecision({
      runId: wait.runId,
      tool_use_id: call.id,
      name: call.name,
      input: call.input,
      needs: call.needs!,
      question: call.needs === 'answer' ? questionOf(call.input) : null,
      since,
    });
    if (reply) return decisionOfReply(call, reply, wait.registry);
  }
  if (options.wait === false) return null;
  while (!wait.signal?.aborted) {
    await pause(Math.min(DECISION_POLL_MS, deadline - Date.now()), wait.signal);
    const found = inTime(await fromInbox(wait, call));
    if (found) return found;
    if (Date.now() >= deadline) return expired();
  }
  return null;
}

/**
 * The inbox's decision for the call, if it fits. Entries for calls this turn already decided
 * are what a writer that died between its DECISION record and the settle left behind: settled.
 */
export async function fromInbox(wait: DecisionWait, call: PendingCall): Promise<Decision | null> {
  if (!wait.inbox) return null;
  const entries = await wait.inbox.read();
  for (const entry of entries) {
    if (decisionFor(wait.context, entry.tool_use_id)) await wait.inbox.settle(entry.tool_use_id);
  }
  // decide() checks a decision before writing it; one that does not fit (written by hand) is left alone.
  return entries.find((entry) => entry.tool_use_id === call.id && verdictFits(call, entry)) ?? null;
}

async function decisionOfReply(call: PendingCall, reply: DecisionReply, registry: ToolRegistry): Promise<Decision> {
  const base = { tool_use_id: call.id, verdict: reply.verdict, by: reply.by ?? 'api', at: Date.now(), ...(reply.note !== undefined ? { note: reply.note } : {}) };
  const decision: Decision =
    reply.verdict === 'approved'
      ? { ...base, ...(reply.input !== undefined ? { input: reply.input } : {}) }
      : reply.verdict === 'denied'
        ? { ...base, reason: reply.reason }
        : { ...base, text: reply.text };
  if (!verdictFits(call, decision)) {
    throw new DecisionReplyError(call.id, `the call needs ${call.needs === 'answer' ? 'an answer (or a denial)' : 'an approval or a denial'}, not "${reply.verdict}"`);
  }
  if (decision.verdict === 'answered' && typeof decision.text !== 'string') throw new DecisionReplyError(call.id, 'an answer needs its text');
  if (decision.verdict === 'denied' && typeof decision.reason !== 'string') throw new DecisionReplyError(call.id, 'a denial needs its reason');
  if (decision.input !== undefined) {
    const checked = await registry.checkInput(call.name, decision.input);
    if ('problem' in checked) throw new DecisionReplyError(call.id, `the edited input does not match ${call.name}'s schema: ${checked.problem}`);
  }
  return decision;
}

function deadlineDecision(call: PendingCall, timeoutMs: number, deadline: number): Decision {
  return { tool_use_id: call.id, verdict: 'denied', by: 'deadline', at: deadline, reason: `no decision within ${formatDecisionTimeout(timeoutMs)}` };
}

/** 90000 → "90s", 900000 → "15m", 7200000 → "2h", 259200000 → "3d": the units --decision-timeout takes. */
export function formatDecisionTimeout(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms} ms`;
}

/**
 * A call run with input a person edited: its result begins by saying so, and what the input
 * became, so the model does not take the result for that of the input it asked for.
 */
export function withEditNotice(asked: PendingCall, ran: PendingCall, outcome: ToolOutcome): ToolOutcome {
  if (ran === asked) return outcome;
  const notice = `A person changed the input of this call before it ran; it ran with ${JSON.stringify(ran.input)}.`;
  const content = typeof outcome.content === 'string' ? `${notice}\n\n${outcome.content}` : [{ type: 'text', text: notice }, ...outcome.content];
  return { ...outcome, content };
}

/**
 * A wait's look, made at once; when it finds nothing the run says it waits and, if it may wait,
 * looks again every DECISION_POLL_MS and at the deadline itself, until it finds what ends the wait
 * or is asked to stop (null).
 */
export async function lookUntilFound(look: () => Promise<Decision | null>, deadline: number, wait: Pick<DecisionWait, 'onWait' | 'options' | 'signal'>): Promise<Decision | null> {
  const first = await look();
  if (first) return first;
  wait.onWait?.();
  if (wait.options.wait === false) return null;
  while (!wait.signal?.aborted) {
    await pause(Math.min(DECISION_POLL_MS, deadline - Date.now()), wait.signal);
    if (wait.signal?.aborted) break;
    const found = await look();
    if (found) return found;
  }
  return null;
}

export function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener('abort', done, { once: true });
  });
}
