/** Pure helpers behind the machine's named actions and guards (no I/O, no time, no randomness). */
import type {
  AgentContext,
  AgentEvent,
  Cancellation,
  BudgetStop,
  CompactionMark,
  ContainerMark,
  ContentBlock,
  Decision,
  DecisionNeed,
  Message,
  ModelReply,
  NextCallWorstCase,
  PendingCall,
  RunFailure,
  TextBlock,
  TokenUsage,
  ToolOutcome,
  ToolResultBlock,
  ToolUseBlock,
} from './agent-loop.types.ts';

export function isToolUseBlock(block: ContentBlock): block is ToolUseBlock {
  return block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string';
}

/**
 * What the Messages API accepts as a tool_use_id (letters, digits, "_" and "-"), and no longer
 * than an inbox file's name may be: an id outside it could not be answered, nor decided on.
 */
const TOOL_USE_ID = /^[A-Za-z0-9_-]{1,128}$/;

export function isToolUseId(id: unknown): boolean {
  return typeof id === 'string' && TOOL_USE_ID.test(id);
}

export function isTextBlock(block: ContentBlock): block is TextBlock {
  return block.type === 'text' && typeof block.text === 'string';
}

/**
 * Why a content list is not one every reader of the loop can walk (objects with a string
 * `type`), or null. Replies are checked with it before the machine sees them.
 */
export function contentProblem(content: readonly unknown[]): string | null {
  for (let i = 0; i < content.length; i++) {
    const block = content[i];
    if (block === null || typeof block !== 'object' || Array.isArray(block)) {
      return `content block ${i} is ${block === null ? 'null' : Array.isArray(block) ? 'a list' : `a ${typeof block}`}, not a content block`;
    }
    if (typeof (block as { type?: unknown }).type !== 'string') return `content block ${i} has no type`;
  }
  return null;
}

export function toolUsesOf(reply: ModelReply): ToolUseBlock[] {
  return reply.content.filter(isToolUseBlock);
}

export function pendingCallsOf(reply: ModelReply, needsDecision?: Readonly<Record<string, DecisionNeed>>): PendingCall[] {
  // The input object is shared with the assistant message on purpose: the journal codec
  // recognises it by identity and does not write it twice.
  return toolUsesOf(reply).map((block) => {
    const needs = needsDecision && Object.hasOwn(needsDecision, block.id) ? needsDecision[block.id] : undefined;
    return needs ? { id: block.id, name: block.name, input: block.input, needs } : { id: block.id, name: block.name, input: block.input };
  });
}

/** The decision recorded for a call in this turn, if any. */
export function decisionFor(context: { readonly decisions: readonly Decision[] }, id: string): Decision | undefined {
  return context.decisions.find((decision) => decision.tool_use_id === id);
}

/** Whether a call must wait for a decision before anything else happens to it. */
export function awaitsDecision(context: { readonly decisions: readonly Decision[] }, call: PendingCall): boolean {
  return call.needs !== undefined && decisionFor(context, call.id) === undefined;
}

/**
 * Whether a verdict answers what the call needs: approve an approval, answer a question, end a
 * wait or bring a child run's answer (its result is the answer's text); deny any of them (for a
 * child: it failed, the call gave up on it, or a person stopped waiting).
 */
export function verdictFits(call: PendingCall, decision: Decision): boolean {
  if (decision.verdict === 'denied') return call.needs !== undefined;
  if (decision.verdict === 'approved') return call.needs === 'approval';
  // Only the child's end answers a call that waits for its child: no one answers in its place.
  return call.needs === 'answer' || call.needs === 'wait' || (call.needs === 'child' && decision.child !== undefined);
}

/** The call as it runs: with the input a person approved in place of the model's, if edited. */
export function effectiveCall(context: { readonly decisions: readonly Decision[] }, call: PendingCall): PendingCall {
  const decision = decisionFor(context, call.id);
  return decision?.verdict === 'approved' && decision.input !== undefined ? { ...call, input: decision.input } : call;
}

/** The outcome a denial or an answer records for its call (an approval records none: the call runs). */
export function decisionOutcomeOf(call: PendingCall, decision: Decision): ToolOutcome {
  if (decision.verdict === 'answered') {
    return { tool_use_id: call.id, name: call.name, kind: 'answered', content: decision.text ?? '', is_error: false };
  }
  return {
    tool_use_id: call.id,
    name: call.name,
    kind: 'denied',
    // A deadline is not a person, nor is a child run's end: the model is told which it was.
    content: decision.child ? (decision.reason ?? `the child run ${decision.child.runId} ended ${decision.child.state}`) : `${decision.by === 'deadline' ? 'denied by the decision deadline' : 'denied by a person'}: ${decision.reason ?? 'no reason given'}`,
    is_error: true,
  };
}

export function textOf(content: string | ContentBlock[]): string {
  if (typeof content === 'string') return content;
  return content
    .filter(isTextBlock)
    .map((block) => block.text)
    .join('\n')
    .trim();
}

export function addUsage(total: TokenUsage, more: TokenUsage): TokenUsage {
  const sum: TokenUsage = {
    input: total.input + more.input,
    output: total.output + more.output,
    cacheRead: total.cacheRead + more.cacheRead,
    cacheWrite: total.cacheWrite + more.cacheWrite,
  };
  // Server tool requests only once a run has made one: every other run counts what it always counted.
  for (const field of SERVER_TOOL_USAGE) {
    if (total[field] !== undefined || more[field] !== undefined) sum[field] = (total[field] ?? 0) + (more[field] ?? 0);
  }
  return sum;
}

export const SERVER_TOOL_USAGE = ['webSearchRequests', 'webFetchRequests'] as const;

/** The container a reply names, in the context's words; the one before when it names none (or not one). */
export function containerAfter(previous: ContainerMark | null | undefined, reply: ModelReply): ContainerMark | null | undefined {
  const given = reply.container;
  if (!given || typeof given.id !== 'string' || given.id === '' || typeof given.expires_at !== 'string') return previous;
  return previous?.id === given.id && previous.expiresAt === given.expires_at ? previous : { id: given.id, expiresAt: given.expires_at };
}

/** Whether the run counts what it spends in dollars: only while it has a cost budget. */
function keepsCost(context: Pick<AgentContext, 'budget' | 'costUsd'>): context is Pick<AgentContext, 'budget'> & { costUsd: number } {
  return context.budget?.maxCostUsd !== undefined && typeof context.costUsd === 'number';
}

/**
 * What a reply's MODEL_USAGE changes in the context: its tokens added, and its cost while the
 * run keeps one (the runtime prices it: the price table is not the machine's).
 */
export function usageCounted(
  context: Pick<AgentContext, 'usage' | 'budget' | 'costUsd'>,
  counted: { usage: TokenUsage; costUsd?: number | undefined },
): Pick<AgentContext, 'usage' | 'costUsd'> {
  const usage = addUsage(context.usage, counted.usage);
  return keepsCost(context) && counted.costUsd !== undefined ? { usage, costUsd: context.costUsd + counted.costUsd } : { usage };
}

export function assistantMessageOf(reply: ModelReply): Message {
  return { role: 'assistant', content: reply.content };
}

export function toolResultBlockOf(outcome: ToolOutcome): ToolResultBlock {
  const block: ToolResultBlock = { type: 'tool_result', tool_use_id: outcome.tool_use_id, content: outcome.content };
  if (outcome.is_error) block.is_error = true;
  return block;
}

/**
 * The user message that closes a turn: one tool_result per pending call, in the order the model
 * named them (not the order they finished), and nothing else, as the Messages API requires.
 */
export function toolResultsMessageOf(pending: PendingCall[], results: ToolOutcome[]): Message {
  const byId = new Map(results.map((outcome) => [outcome.tool_use_id, outcome]));
  const content = pending.map((call) => {
    const outcome = byId.get(call.id);
    if (!outcome) throw new Error(`closing a turn without a result for ${call.id}`);
    return toolResultBlockOf(outcome);
  });
  return { role: 'user', content };
}

export function openCalls(context: Pick<AgentContext, 'pending' | 'results'>): PendingCall[] {
  const { pending, results } = context;
  // Asked several times a step (guards, the scheduler): a turn's few results need no Set.
  if (results.length <= 8) return pending.filter((call) => !results.some((outcome) => outcome.tool_use_id === call.id));
  const recorded = new Set(results.map((outcome) => outcome.tool_use_id));
  return pending.filter((call) => !recorded.has(call.id));
}

export function failureForStopReason(reply: ModelReply): RunFailure {
  switch (reply.stop_reason) {
    case 'max_tokens':
      return {
        reason: 'max_tokens',
        message:
          'The model hit max_tokens before finishing its reply; nothing in the cut-off reply was executed. ' +
          'Resume with a larger --max-tokens to ask again.',
        retryable: true,
      };
    case 'refusal':
      return {
        reason: 'refusal',
        message: 'The model refused to continue this task (stop_reason=refusal). Nothing more was executed.',
        retryable: false,
      };
    case 'model_context_window_exceeded':
      return {
        reason: 'context_window_exceeded',
        message:
          "The conversation no longer fits the model's context window (stop_reason=model_context_window_exceeded). " +
          'Nothing more was executed.',
        retryable: false,
      };
    default:
      return {
        reason: 'unknown_stop_reason',
        message: `The model stopped with stop_reason=${String(reply.stop_reason)}, which this version does not handle. Nothing in that reply was executed.`,
        retryable: true,
      };
  }
}

export function pauseLimitFailure(maxPausesInARow: number): RunFailure {
  return {
    reason: 'pause_limit',
    message:
      `The model paused its turn (stop_reason=pause_turn) more than ${maxPausesInARow} times in a row, the most this run allows. ` +
      'The paused content is kept: resume the run to let the model continue it.',
    retryable: true,
  };
}

/** Why a cancellation is not one the journal can keep (who, why, when), or null. */
export function cancellationProblem(cancellation: unknown): string | null {
  const given = cancellation as Partial<Cancellation> | null;
  if (given === null || typeof given !== 'object') return 'a cancellation must be an object {by, reason, at}';
  if (typeof given.by !== 'string' || given.by.trim() === '') return 'a cancellation must say who cancelled (by)';
  if (given.reason !== null && typeof given.reason !== 'string') return 'a cancellation reason must be text or null';
  if (typeof given.at !== 'number' || !Number.isFinite(given.at)) return 'a cancellation must say when (at, epoch milliseconds)';
  return null;
}

/** Every token a reply is billed for: input, output, cache reads and cache writes. */
export function totalTokens(usage: TokenUsage): number {
  return usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
}

/**
 * The budget the run has reached (spent at or above its limit, or, given the worst case of the
 * next call, spent plus that above it), or null. Tokens are checked first: they are counted exactly, a cost is an estimate at list prices. A cost budget whose
 * spending is not known (costUsd absent) is never reached here: the runtime refuses such a run.
 */
export function budgetStopOf(context: Pick<AgentContext, 'budget' | 'usage' | 'costUsd'>, nextCall?: NextCallWorstCase): BudgetStop | null {
  const budget = context.budget;
  if (!budget) return null;
  const tokens = totalTokens(context.usage);
  if (budget.maxTotalTokens !== undefined && tokens >= budget.maxTotalTokens) return { budget: 'tokens', spent: tokens, limit: budget.maxTotalTokens };
  const cost = context.costUsd;
  if (budget.maxCostUsd !== undefined && typeof cost === 'number' && cost >= budget.maxCostUsd) return { budget: 'cost', spent: cost, limit: budget.maxCostUsd };
  if (!nextCall) return null;
  // Spent is checked before a call, so without this the call's own reply could pass the limit.
  if (budget.maxTotalTokens !== undefined && tokens + nextCall.tokens > budget.maxTotalTokens) return { budget: 'tokens', spent: tokens, limit: budget.maxTotalTokens, nextCall: nextCall.tokens };
  if (budget.maxCostUsd !== undefined && typeof cost === 'number' && nextCall.costUsd !== undefined && cost + nextCall.costUsd > budget.maxCostUsd) {
    return { budget: 'cost', spent: cost, limit: budget.maxCostUsd, nextCall: nextCall.costUsd };
  }
  return null;
}

/** Whether a tenant's quota stop, as an event brings it, is a whole one: a tenant, a month, and spent at or above the limit. */
export function isTenantQuotaStop(stop: BudgetStop | undefined): stop is BudgetStop & { tenant: string; month: string } {
  return (
    stop !== undefined &&
    (stop.budget === 'cost' || stop.budget === 'tokens') &&
    typeof stop.tenant === 'string' &&
    typeof stop.month === 'string' &&
    Number.isFinite(stop.spent) &&
    Number.isFinite(stop.limit) &&
    stop.spent >= stop.limit
  );
}

/**
 * Whether the context may be cut at `keepFrom`: messages[0, keepFrom) replaced by one user
 * message (a summary) and messages[keepFrom…] kept. The cut lies before an assistant message
 * that is not the first, so the summary and the kept part alternate roles, and a tool_use
 * (assistant) stays with its tool_result (the user message right after it).
 */
export function isCompactionCut(messages: readonly Message[], keepFrom: number): boolean {
  return Number.isSafeInteger(keepFrom) && keepFrom > 0 && keepFrom < messages.length && messages[keepFrom]!.role === 'assistant';
}

/** Whether a block is a server compaction block (compact_20260112) that carries a summary. */
export function isCompactionBlock(block: ContentBlock): boolean {
  return block.type === 'compaction';
}

/**
 * Server compaction: the server no longer reads what comes before its last compaction block,
 * so the context keeps only the messages from the one holding it (the journal keeps the rest).
 * Returns the messages unchanged when no compaction block is in them past the first message.
 */
export function afterLastCompaction(messages: readonly Message[]): { messages: Message[]; dropped: Message[] } {
  for (let i = messages.length - 1; i > 0; i--) {
    const content = messages[i]!.content;
    if (typeof content !== 'string' && content.some(isCompactionBlock)) return { messages: messages.slice(i), dropped: messages.slice(0, i) };
  }
  return { messages: messages as Message[], dropped: [] };
}

/** The context's compaction totals after `dropped` messages were taken out once more. */
export function markCompaction(mark: CompactionMark | null | undefined, dropped: readonly Message[]): CompactionMark {
  const replies = dropped.filter((message) => message.role === 'assistant').length;
  return { times: (mark?.times ?? 0) + 1, messages: (mark?.messages ?? 0) + dropped.length, replies: (mark?.replies ?? 0) + replies };
}

type Reopen = Extract<AgentEvent, { type: 'REOPEN' }>;

/**
 * The context a REOPEN leaves: the settings it gives (the turn limit, a budget change, which
 * lifts a budget stop) and, for a finished run, a fresh start: no failure, a new series of
 * pauses (it may have failed on too many), and with a message the user's next turn (messages
 * only ever grow; the old answer is no longer the answer).
 */
export function reopenedContext(context: AgentContext, event: Reopen, finished: boolean): Partial<AgentContext> {
  const budget = event.budget ? { ...event.budget, budgetStop: context.budgetStop ? null : context.budgetStop } : {};
  const fresh = finished ? { failure: null, pausesInARow: 0 } : {};
  const message: Partial<AgentContext> =
    event.message === undefined ? {} : { messages: context.messages.concat([{ role: 'user', content: event.message }]), finalText: null };
  return { maxTurns: event.maxTurns, ...budget, ...fresh, ...message };
}

/** A message that can continue a conversation: text with something in it. */
export function isContinuingMessage(message: unknown): message is string {
  return typeof message === 'string' && message.trim() !== '';
}
