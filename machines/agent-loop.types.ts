/**
 * The data the agent loop machine carries. Shapes follow the Anthropic Messages API closely
 * enough that `messages` can be sent as-is, but blocks the loop does not interpret (thinking,
 * server tool blocks, citations…) pass through untouched as open records.
 */

/** Any content block as the API returns it; the loop only looks inside `tool_use` and `text`. */
export interface ContentBlock {
  type: string;
  [field: string]: unknown;
}

export interface TextBlock extends ContentBlock {
  type: 'text';
  text: string;
}

export interface ToolUseBlock extends ContentBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

/** What a tool_result carries: plain text, or content blocks (text, image…). */
export type ToolResultContent = string | ContentBlock[];

export interface ToolResultBlock extends ContentBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: ToolResultContent;
  is_error?: boolean | undefined;
}

export interface Message {
  role: 'user' | 'assistant';
  content: string | ContentBlock[];
}

export type StopReason =
  | 'end_turn'
  | 'stop_sequence'
  | 'tool_use'
  | 'max_tokens'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded'
  /** Server compaction paused after writing its compaction block (pause_after_compaction): ask again. */
  | 'compaction';

export interface TokenUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** Server tool requests (usage.server_tool_use), present once there was one: web searches, paid per search. */
  webSearchRequests?: number | undefined;
  /** Web fetches (no price of their own: their pages are input tokens). */
  webFetchRequests?: number | undefined;
}

/** The code execution container a reply ran in (the API's `container`): the next requests reuse it while it lives. */
export interface ContainerMark {
  id: string;
  /** When the API says it expires (ISO 8601). */
  expiresAt: string;
}

/** One reply of the model, reduced to what the loop needs and what must be sent back. */
export interface ModelReply {
  content: ContentBlock[];
  /** A string outside {@link StopReason} is a stop reason this version does not know: the run fails clearly. */
  stop_reason: StopReason | (string & {}) | null;
  usage: TokenUsage;
  model?: string | undefined;
  /** The container the reply's code execution ran in, as the API gives it (absent: none). */
  container?: { id: string; expires_at: string } | null | undefined;
}

/**
 * What a call waits for before it may go on — every kind of await, each ended by one DECISION
 * record: a person's approval, a person's answer (ask_user); for a wait call (the wait tool),
 * its time or its event, decided by a signal or by the clock; for a call that queued a run of its
 * own (a fleet's sub-agent child), that run's end, delivered to the run's decisions like a
 * person's decision (or the call's time to wait for it running out).
 */
export type DecisionNeed = 'approval' | 'answer' | 'wait' | 'child';

/** Every kind of await, for readers that must refuse a flag they do not know. */
export const DECISION_NEEDS: readonly DecisionNeed[] = ['approval', 'answer', 'wait', 'child'];

/** A tool call the model named and the loop has not closed yet. */
export interface PendingCall {
  id: string;
  name: string;
  input: unknown;
  /**
   * Set when the call needs a person's decision first. Fixed when the reply arrives and kept in
   * checkpoint A, so that a resume and another process (pending, approve) read the same answer
   * from the journal alone, without the tools' code.
   */
  needs?: DecisionNeed | undefined;
}

export type Verdict = 'approved' | 'denied' | 'answered';

/** A person's (or a deadline's) decision about one call: durable before anything acts on it. */
export interface Decision {
  tool_use_id: string;
  verdict: Verdict;
  /** Who decided: a user name, 'api' or what a program passes, 'deadline' for a timeout. */
  by: string;
  /** Epoch milliseconds when it was decided. */
  at: number;
  note?: string | undefined;
  /** Why it was denied (denied only). */
  reason?: string | undefined;
  /** Input edited by a person (approved only): the call runs with it instead of the model's. */
  input?: unknown;
  /** The answer (answered only): it becomes the call's tool_result. */
  text?: string | undefined;
  /** The signal that ended a wait (answered waits only): its name, its sender's id (null: none given) and when it was sent. */
  signal?: { name: string; id: string | null; sentAt: number } | undefined;
  /**
   * The child run whose end this is (child awaits only): its id and the state it ended in. Its
   * text (answered) or reason (denied) is then the child's own words, given to the model as they are.
   */
  child?: { runId: string; state: string } | undefined;
}

/** The call the run waits on, and since when (the time of its DECISION_NEEDED record). */
export interface AwaitedCall {
  tool_use_id: string;
  since: number;
}

/**
 * How a call's result came to be. Every kind is a final answer for that tool_use_id; none is a
 * placeholder written before the work it describes.
 * - ran: the tool ran and returned
 * - threw: the tool ran and threw
 * - timed-out: the tool ran past its time limit and was abandoned
 * - rejected: the tool was not run (unknown tool, input not matching its schema)
 * - verified: on resume, the tool's verify() confirmed the effect had happened
 * - unknown: on resume, a side-effecting call with no record and no way to check
 * - denied: a person (or a decision deadline) refused the call; it never ran
 * - answered: an ask_user call, answered by a person; the answer is its result
 */
export type OutcomeKind = 'ran' | 'threw' | 'timed-out' | 'rejected' | 'verified' | 'unknown' | 'denied' | 'answered';

/** The recorded result of one call: a ledger entry, keyed by `tool_use_id`. */
export interface ToolOutcome {
  tool_use_id: string;
  name: string;
  kind: OutcomeKind;
  content: ToolResultContent;
  is_error: boolean;
}

export type FailureReason =
  | 'max_tokens'
  | 'refusal'
  | 'context_window_exceeded'
  | 'invalid_reply'
  | 'unknown_stop_reason'
  | 'pause_limit';

/** Who cancelled a run, why, and when (epoch milliseconds): kept in its final `cancelled` state. */
export interface Cancellation {
  by: string;
  reason: string | null;
  at: number;
}

export interface RunFailure {
  reason: FailureReason;
  message: string;
  /** Whether asking the model again (after a resume, perhaps with other settings) can help. */
  retryable: boolean;
}

export interface AgentContext {
  task: string;
  system: string | null;
  maxTurns: number;
  /** Number of tool-using replies acted on so far (turn N is the N-th such reply). */
  turn: number;
  usage: TokenUsage;
  /** Append-only: the store relies on it to write only what is new. */
  messages: Message[];
  /** This turn's calls, in the order the model gave them; empty outside a turn. */
  pending: PendingCall[];
  /** This turn's recorded outcomes, in the order they were recorded. */
  results: ToolOutcome[];
  /** This turn's decisions, in the order they were made; emptied when a turn opens. */
  decisions: Decision[];
  /** The call waiting for a decision (state awaitingDecision), else null. */
  awaiting: AwaitedCall | null;
  /** pause_turn replies in a row just before this point; any other reply sets it back to 0. */
  pausesInARow: number;
  /** The most pause_turn replies in a row the run continues after; one more fails it (reason pause_limit). */
  maxPausesInARow: number;
  /** A tool_use reply that arrived when MAX_TURNS was reached: kept so a resume with more turns can act on it. */
  heldReply: ModelReply | null;
  finalText: string | null;
  failure: RunFailure | null;
  /** Set when the run was cancelled (state cancelled): who, why, when. Absent or null otherwise. */
  cancellation?: Cancellation | null;
  /** The run's spending limits (absent: none); a resume may change them (a REOPEN record). */
  budget?: Budget | null | undefined;
  /**
   * US dollars the run's replies cost at list prices, each priced by the model that gave it;
   * kept only while the run has a cost budget (absent otherwise).
   */
  costUsd?: number | null | undefined;
  /** Which budget stopped the run, with the figures (state stoppedAtBudget only). */
  budgetStop?: BudgetStop | null | undefined;
  /**
   * What compaction took out of `messages` so far (the journal keeps it), or null when nothing
   * was. Absent in journals written before compaction existed: null.
   */
  compacted?: CompactionMark | null | undefined;
  /**
   * The code execution container of the last reply that named one: sent with the next requests
   * while it lives, so that files and state made in it stay. Absent: none so far.
   */
  container?: ContainerMark | null | undefined;
}

/** Spending limits checked before each model call; reaching one stops the run (stoppedAtBudget). */
export interface Budget {
  /** US dollars at list prices (src/model/prices.ts). */
  maxCostUsd?: number | undefined;
  /** Input, output, cache-read and cache-write tokens together. */
  maxTotalTokens?: number | undefined;
}

/** What a resume changes in a run's budget: the limits, and the cost so far while there is a cost budget. */
export type BudgetChange = Pick<AgentContext, 'budget' | 'costUsd'>;

export type BudgetName = 'cost' | 'tokens';

/**
 * The budget a run reached: what was spent (dollars or tokens) against its limit, and, when the
 * run stopped because the next call could pass the limit, what that call could spend at most.
 */
export interface BudgetStop {
  budget: BudgetName;
  spent: number;
  limit: number;
  nextCall?: number;
  /**
   * Set when the limit was the run's tenant's monthly quota (a fleet's), not the run's own budget:
   * whose quota, and the month ('YYYY-MM', UTC) whose spend reached it. A resume that lifts the
   * stop lets the quota be checked again before the call.
   */
  tenant?: string;
  month?: string;
}

/** The most the next model call could spend: its max_tokens plus its estimated input, and their price when the run has a cost budget. */
export interface NextCallWorstCase {
  tokens: number;
  costUsd?: number;
}

/** Totals over every compaction of a run, server or client. */
export interface CompactionMark {
  /** How many times the context was compacted. */
  times: number;
  /** Messages taken out of `messages` (replaced by a summary, or no longer read by the server). */
  messages: number;
  /** Assistant messages among them: where the conversation stands is `replies + assistant messages kept`. */
  replies: number;
}

export interface AgentInput {
  task: string;
  system?: string | null | undefined;
  maxTurns: number;
  /** Default {@link MAX_PAUSES_IN_A_ROW}. */
  maxPausesInARow?: number;
  budget?: Budget | undefined;
  /** With a cost budget: what the run has cost so far (0 for a new run). */
  costUsd?: number | undefined;
}

/**
 * A model that answers pause_turn again and again would keep the run asking for ever (each
 * pause is a paid call): past this many in a row, the run fails with reason pause_limit, and a
 * resume lets it continue.
 */
export const MAX_PAUSES_IN_A_ROW = 8;

export type AgentEvent =
  | {
      type: 'MODEL_REPLY';
      reply: ModelReply;
      /** The reply's calls that need a decision first, by tool_use_id (evaluated by the driver as the reply arrives). */
      needsDecision?: Record<string, DecisionNeed> | undefined;
    }
  | { type: 'MODEL_REPLY_INVALID'; reason: string; usage: TokenUsage }
  /**
   * A reply's tokens, counted the moment it arrives (before the reply is checked or acted on), and
   * with a cost budget what they cost: US dollars priced by the runtime (prices are not the machine's).
   */
  | { type: 'MODEL_USAGE'; usage: TokenUsage; costUsd?: number | undefined }
  | { type: 'TOOL_RESULT'; outcome: ToolOutcome }
  | { type: 'CLOSE_TURN' }
  /** The next open call needs a decision it does not have: wait for one, from `at`. */
  | { type: 'DECISION_NEEDED'; tool_use_id: string; at: number }
  /** A decision about the awaited call. */
  | { type: 'DECISION'; decision: Decision }
  /** A person (or a program) cancelled the run: it ends here, in the final state cancelled. */
  | { type: 'CANCEL'; cancellation: Cancellation }
  /**
   * The runtime is about to call the model and a budget is reached: stop instead. With
   * `nextCall`, also when that call's worst case would pass a limit (a sub-agent's share). With
   * `tenantQuota`, the run's tenant's monthly quota is reached (the runtime read it, with the
   * tenant's spend, from the fleet's database): the stop is that one.
   */
  | { type: 'BUDGET_REACHED'; nextCall?: NextCallWorstCase; tenantQuota?: BudgetStop | undefined }
  /**
   * Client compaction: before a model call, the context measured `estimatedTokens`, at or above
   * `limit` (trigger × window); `keepFrom` is where the recent messages that stay begin.
   */
  | { type: 'COMPACT'; estimatedTokens: number; limit: number; keepFrom: number }
  /** The summary of messages[0, replaced): one user message that takes their place (its tokens are counted on arrival). */
  | { type: 'COMPACTED'; summary: Message; replaced: number }
  /**
   * A process takes up the run with settings of its own: `maxTurns` (the run's total, given or
   * kept), a budget change, and for a finished conversation the user's next message. A final
   * state that lacked what is given is left for awaitingModel; a live state keeps going with the
   * new settings.
   */
  | { type: 'REOPEN'; maxTurns: number; budget?: BudgetChange | null | undefined; message?: string | undefined };

export type AgentStateName =
  | 'awaitingModel'
  | 'pendingTool'
  | 'effectRecorded'
  | 'awaitingDecision'
  | 'closed'
  | 'done'
  | 'stoppedAtMaxTurns'
  | 'failed'
  | 'cancelled'
  | 'stoppedAtBudget'
  | 'compacting';

/**
 * Which states are final, here rather than read off the machine because the commands that read a
 * journal (status, pending, approve, deny) start without loading xstate (test/cli/cli-lazy.test.ts).
 * A record, so that the compiler asks for every AgentStateName; test/machines/machine-structure.test.ts
 * holds both lists equal to the ones machines/agent-loop.states.ts reads off the machine.
 */
const IS_FINAL: Record<AgentStateName, boolean> = {
  awaitingModel: false,
  compacting: false,
  pendingTool: false,
  effectRecorded: false,
  awaitingDecision: false,
  closed: false,
  done: true,
  stoppedAtMaxTurns: true,
  failed: true,
  cancelled: true,
  stoppedAtBudget: true,
};

export const AGENT_STATES: readonly AgentStateName[] = Object.keys(IS_FINAL) as AgentStateName[];

export const FINAL_STATES: readonly AgentStateName[] = AGENT_STATES.filter((state) => IS_FINAL[state]);

/**
 * The final states a larger limit leaves: a run stopped at its MAX_TURNS or at its budget rests
 * there until a process brings more turns or a larger budget (REOPEN), and goes on from where it
 * stopped. Final for the machine (nothing happens by itself), but not finished for a store, a
 * listing or a prune: every one of them counts such a run as stopped, resumable, the same way.
 * test/machines/machine-structure.test.ts holds each to a REOPEN that only a limit opens.
 */
export const STOPPED_AT_LIMIT_STATES: readonly AgentStateName[] = ['stoppedAtMaxTurns', 'stoppedAtBudget'];

export function isStoppedAtLimit(state: AgentStateName): boolean {
  return STOPPED_AT_LIMIT_STATES.includes(state);
}

/**
 * Whether a run at rest in this state has finished: a final state but a stop at a limit. (A done
 * or failed run may still be taken up by whoever brings the user's next message or a retry; a
 * fleet never does that by itself, and nothing such a run lacked was a limit.)
 */
export function isFinishedState(state: AgentStateName): boolean {
  return IS_FINAL[state] && !isStoppedAtLimit(state);
}

export const ZERO_USAGE: TokenUsage = Object.freeze({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
