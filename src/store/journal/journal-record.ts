/**
 * One persisted transition of a run. A record holds only what changed since the previous one
 * (new messages, the new ledger entry, the small scalars), so the cost of saving a transition
 * does not grow with the length of the history. Folding the records in order rebuilds the
 * machine's snapshot.
 */
import type {
  AgentContext,
  AgentStateName,
  AwaitedCall,
  Cancellation,
  Budget,
  BudgetStop,
  CompactionMark,
  ContainerMark,
  ContentBlock,
  Decision,
  DecisionNeed,
  Message,
  ModelReply,
  RunFailure,
  TokenUsage,
  ToolOutcome,
} from '../../../machines/agent-loop.types.ts';

export const JOURNAL_FORMAT = 'durable-agent/journal';
/**
 * Bump when a record written by this version could not be read correctly by an older one.
 * Version 2: a run whose calls can wait for a person (a pinned decisionPolicy, or a tool with
 * needsApproval): a release before decisions existed would ignore a call's `needs` flag and run
 * it unasked, and it refuses any version but 1. Every other run is still written as version 1.
 * Snapshot records need no new version: a snapshot is an ordinary record written in
 * full (every field, every list from 0) plus a `snapshot` field an older release ignores, so it
 * folds it like any record and gets the same state (see encodeSnapshotRecord in src/store/journal/journal-codec.ts).
 * Version 3: a run started with a budget (maxCostUsd, maxTotalTokens): a release before budgets
 * would ignore it and go on spending, and cannot read the state stoppedAtBudget.
 * Version 4: a run whose calls can wait for the child runs they queue (a fleet run with a
 * sub-agent tool): a release before child awaits does not know the flag `needs: 'child'`, and
 * would run the call instead of waiting for its child.
 * Version 5: a sealed run (started with keys): an older release would take its sealed strings
 * for the run's text and send them to the model. A run started plain keeps its version.
 */
export const JOURNAL_VERSION = 5;
/** A run whose content is sealed (see src/seal/): the header names its run key. */
export const JOURNAL_VERSION_SEALED = 5;
/** A run whose calls can wait for the child runs they queue (a fleet's sub-agents). */
export const JOURNAL_VERSION_CHILD_AWAITS = 4;
/** A run with a budget or compaction and no child awaits. */
export const JOURNAL_VERSION_BUDGETS = 3;
/** A journal whose calls can wait for a person and that has no budget. */
export const JOURNAL_VERSION_DECISIONS = 2;
/** A run with compaction on (its header pins it): an older release would not know the state
 * `compacting`, the stop reason `compaction`, or that the model must be asked with the compaction beta. */
export const JOURNAL_VERSION_COMPACTION = 3;
/** A journal whose calls never wait for a person: readable by every release. */
export const JOURNAL_VERSION_PLAIN = 1;
/** The versions this release reads. */
export const JOURNAL_VERSIONS_READ: readonly number[] = [1, 2, 3, 4, 5];

export function isReadableVersion(version: unknown): boolean {
  return typeof version === 'number' && JOURNAL_VERSIONS_READ.includes(version);
}

export interface JournalHeader {
  format: typeof JOURNAL_FORMAT;
  version: number;
  runId: string;
  /**
   * Set when the run's id was given by its user (runId, a folder of runs by id) rather than made
   * at random: a start under another id never clears such a run. Absent for a random id (an older
   * reader ignores it: the version stays the same).
   */
  runIdGiven?: true;
  /**
   * The id of the run key its content is sealed with (version 5): the key itself is kept wrapped
   * beside the journal (run-key.json). Absent: a plain run, which stays plain.
   */
  sealed?: string;
  createdAt: number;
  /**
   * What started the run, so a resume by something else is noticed. Absent in journals written
   * before it was recorded (an older reader ignores it: the version stays the same).
   */
  startedBy?: RunOrigin;
  /**
   * The run's trace (OpenTelemetry), when its start was traced: every process that works on the
   * run later adds its spans under it. Absent otherwise (an older reader ignores it).
   */
  trace?: RunTraceContext;
  /**
   * The run's rule for decisions, pinned when it started, applied by every resume (which may add
   * to it). Absent for a run started without one (and in journals from before it was pinned).
   */
  decisionPolicy?: PinnedDecisionPolicy;
  /**
   * Set on a run made by `fork`: the run it was copied from and the last record it took. Its
   * records 0..seq are the parent's; everything after is its own. Absent otherwise (an older
   * reader ignores it and resumes the run as any other: the version stays the same).
   */
  forkedFrom?: ForkOrigin;
  /** The run's compaction, pinned when it started (version 3); absent: off. */
  compaction?: PinnedCompaction;
  /** The run's tool result clearing (clear_tool_uses_20250919), pinned when it started (version 3); absent: none. */
  clearToolUses?: PinnedClearToolUses;
  /**
   * The agent definition the run was started with (defineAgent): its name and version. Only a
   * definition of that name at that version, or one that declares it compatible, drives the
   * run on. Absent for a run started from parts (an older reader ignores it).
   */
  agent?: PinnedAgent;
  /**
   * How the run's Claude model is asked (thinking, sampling, tool choice, stop sequences, service
   * tier), pinned when it started: these change what the model does, so a resume asks the same
   * way. Never a header, a beta, a key or a client. Absent: the API's defaults (an older reader
   * ignores it: the version stays the same).
   */
  request?: PinnedRequest;
  /**
   * The model's price when it was given with the run (a model the price table does not know):
   * a resume prices its cost budget with it. Absent: the price table's (an older reader ignores it).
   */
  price?: PinnedPrice;
  /**
   * Set on a sub-agent's child run: the run whose call started it, and the call. Absent
   * otherwise (an older reader ignores it: the version stays the same).
   */
  calledBy?: CalledBy;
  /**
   * Whose the run is (core/tenant.ts): absent for the default tenant's. An older reader ignores
   * it: the version stays the same.
   */
  tenant?: string;
}

/** See JournalHeader.calledBy. */
export interface CalledBy {
  runId: string;
  toolUseId: string;
}

/**
 * See JournalHeader.request. Each field as the Messages API takes it (thinking and toolChoice in
 * the API's own shapes); read from disk, so loosely typed: src/model/pinned-request.ts checks it.
 */
export interface PinnedRequest {
  /** The Messages API version asked for (the anthropic-version header): a value, never a secret. */
  apiVersion?: string;
  thinking?: { type: string; budget_tokens?: number; display?: string | null };
  effort?: string;
  toolChoice?: { type: string; name?: string; disable_parallel_tool_use?: boolean };
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences?: string[];
  serviceTier?: string;
  /** The server tools offered (web search, web fetch, code execution), each with its settings in anthropicModel's words. */
  serverTools?: { webSearch?: Record<string, unknown>; webFetch?: Record<string, unknown>; codeExecution?: Record<string, unknown> };
}

/** See JournalHeader.price: US dollars per million tokens. */
export interface PinnedPrice {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** See JournalHeader.agent. */
export interface PinnedAgent {
  name: string;
  version: string;
}

/** Where a forked run came from (see JournalHeader.forkedFrom). */
export interface ForkOrigin {
  runId: string;
  /** The parent's last record the fork took (it holds records 0..seq of the parent). */
  seq: number;
  /** Where the parent lives, in words a user can act on (a path, a database and run id). */
  location: string;
  /** Epoch milliseconds when the fork was made. */
  at: number;
  /** A fleet run: the parent's id in da_runs (absent for a file run). */
  fleetRun?: string;
}

/** How a run keeps its context under the model's window (see src/compaction/). */
export interface PinnedCompaction {
  mode: 'server' | 'client';
  /** The window the trigger is a ratio of, in input tokens. */
  contextWindow: number;
  triggerRatio: number;
}

/** Which old tool results the API clears from what the model reads (see src/compaction/clear-tool-uses.ts). */
export interface PinnedClearToolUses {
  /** Clear once the input reaches this many tokens. */
  triggerTokens: number;
  /** The most recent tool uses kept whole. */
  keep: number;
  clearAtLeast?: number;
  excludeTools?: string[];
  clearToolInputs?: boolean;
}

/** Which calls of the run wait for a person (see src/awaits/pinned-policy.ts). */
export interface PinnedDecisionPolicy {
  requireApproval?: string[] | 'side-effects';
  allowQuestions?: boolean;
  decisionTimeoutMs?: number;
}

/** A span context in W3C form: the run's root span, the parent of each process's session span. */
export interface RunTraceContext {
  /** 32 lowercase hex digits. */
  traceId: string;
  /** 16 lowercase hex digits. */
  spanId: string;
  traceFlags: number;
}

/** What drives a run: the command, the model and the tools it offers. */
export interface RunOrigin {
  /** 'demo', 'run', 'worker', or 'api' for a program calling startRun itself. */
  command: string;
  model: string;
  /** The tools' names, in the order they were offered. */
  tools: string[];
  /** Each tool's input schema, by tool name: the first 16 hex digits of the SHA-256 of its canonical JSON. */
  toolSchemas: Record<string, string>;
  /**
   * Each tool's reconcile traits and, for an MCP tool, the server's annotations, by tool name.
   * Absent in journals written before they were recorded (then not compared).
   */
  toolAnnotations?: Record<string, PinnedAnnotations>;
  /** The module of agent definitions the run's agent was loaded from (`run --agents FILE`), absolute; absent otherwise. */
  agentsModule?: string;
}

/** What a resume may do with a call of this tool left open; a change makes its open calls "unknown". */
export interface PinnedAnnotations {
  readOnly: boolean;
  idempotent: boolean;
  /** The hints an MCP server gave (readOnlyHint, destructiveHint, idempotentHint, openWorldHint). */
  hints?: Record<string, boolean>;
}

/** A list field changed: keep the first `from` items, then append `add`. */
export interface ListEdit<T> {
  from: number;
  add: T[];
}

/** A tool_result block whose content is the ledger entry of the same id, written once, in the ledger. */
export interface LedgerRef {
  $ledger: string;
}

export type EncodedBlock = ContentBlock | LedgerRef;

export interface EncodedMessage {
  role: Message['role'];
  content: string | EncodedBlock[];
}

/** A pending call; `input` is left out when it is the input of the same tool_use block in messages. */
export interface EncodedPendingCall {
  id: string;
  name: string;
  input?: unknown;
  /** Absent for a call that needs no decision (and in journals from before decisions existed). */
  needs?: DecisionNeed;
}

/** Why the runtime made a transition, when it is not plain from the event (resume decisions). */
export interface RecordNote {
  reconcile?: ReconcileNote;
  reopened?: { maxTurns: number; previousState: AgentStateName };
  /**
   * On a REOPEN record: a finished conversation continued, at `turn`, with the user message this
   * record appends to messages (its text is kept there once, not here).
   */
  continued?: { turn: number };
  /** On a MODEL_USAGE record: why some of the reply's token figures were counted as 0. */
  usage?: string;
  /**
   * On a MODEL_USAGE record written with a turn's close: it counts what these calls spent on the
   * run's behalf (a sub-agent's child run), not a reply of the run's own model.
   */
  charged?: { calls: string[] };
  /** On the first record of a run: which process started it. */
  started?: { pid: number };
  /**
   * Calls a resume settled from the ledger since the previous record: nothing was written for
   * them (their outcome was already there), so the decision is noted on the next record.
   */
  reused?: ReconcileNote[];
  /**
   * On the first record a resuming process writes: the process before it stopped (crashed,
   * was killed or interrupted) after record `fromSeq`, and this one took over from there.
   */
  resumed?: ResumeNote;
}

export interface ResumeNote {
  pid: number;
  /** The last record the previous process wrote. */
  fromSeq: number;
  /** A cut-off end the resume dropped, if there was one. */
  cutEnd: { offset: number; bytes: number; lostCommittedRecord: number | null } | null;
}

export interface ReconcileNote {
  tool_use_id: string;
  name: string;
  decision: ReconcileOutcomeName;
  /** Which rule decided (absent in journals written before it was recorded). */
  rule?: ReconcileRule;
  /** Where the trait the rule rests on came from, e.g. `readOnlyHint of MCP server "fs"`. */
  basis?: string;
}

/**
 * ledger-hit: reused; read-only / idempotent: re-run; verify: asked; no-verify: a side effect
 * that cannot be checked; tool-gone / tool-changed: the tool is not the one the call was made to.
 */
export type ReconcileRule = 'ledger-hit' | 'read-only' | 'idempotent' | 'verify' | 'no-verify' | 'tool-gone' | 'tool-changed';

export type ReconcileOutcomeName =
  | 'reused'
  | 're-ran-read-only'
  | 're-ran-idempotent'
  | 'verified-done'
  | 'verified-not-done-ran'
  | 'unknown-reported';

/**
 * The event each record was written for: the run's creation (START), then the machine's events
 * (DECISION_NEEDED: a call waits for a person; DECISION: a person's decision, with the call's
 * outcome in `results` when it is a denial or an answer; MODEL_USAGE: a reply's tokens, counted
 * the moment it arrives so that a crash before checkpoint A does not lose them; REOPEN: a process
 * took the run up with settings of its own, or reopened a finished run).
 */
export type RecordEvent =
  | 'START'
  | 'REOPEN'
  | 'MODEL_USAGE'
  | 'MODEL_REPLY'
  | 'MODEL_REPLY_INVALID'
  | 'TOOL_RESULT'
  | 'CLOSE_TURN'
  | 'DECISION_NEEDED'
  | 'DECISION'
  | 'CANCEL'
  | 'BUDGET_REACHED'
  | 'COMPACT'
  | 'COMPACTED';

export const RECORD_EVENTS: readonly RecordEvent[] = [
  'START',
  'REOPEN',
  'MODEL_USAGE',
  'MODEL_REPLY',
  'MODEL_REPLY_INVALID',
  'TOOL_RESULT',
  'CLOSE_TURN',
  'DECISION_NEEDED',
  'DECISION',
  'CANCEL',
  'BUDGET_REACHED',
  'COMPACT',
  'COMPACTED',
];

export interface JournalRecord {
  seq: number;
  /** Epoch milliseconds when the record was handed to the store. */
  at: number;
  state: AgentStateName;
  event: RecordEvent;
  /** Counters are written when they change (always in record 0). */
  turn?: number;
  maxTurns?: number;
  usage?: TokenUsage;
  task?: string;
  system?: string | null;
  /** Absent in journals written before the pause limit (read as 0 and the default limit). */
  pausesInARow?: number;
  maxPausesInARow?: number;
  messages?: ListEdit<EncodedMessage>;
  pending?: EncodedPendingCall[];
  /** Ledger entries written by this transition (appended to the turn's results after `from`). */
  results?: ListEdit<ToolOutcome>;
  /** This turn's decisions (absent in journals from before decisions existed: none). */
  decisions?: ListEdit<Decision>;
  /** The call waiting for a decision; written when it changes (absent: null). */
  awaiting?: AwaitedCall | null;
  heldReply?: ModelReply | null;
  finalText?: string | null;
  failure?: RunFailure | null;
  /** Who cancelled the run (a CANCEL record); written when it changes (absent: null). */
  cancellation?: Cancellation | null;
  /** Compaction totals; written when they change (absent: none so far). */
  compacted?: CompactionMark | null;
  /** The code execution container the next requests reuse; written when it changes (absent: none so far). */
  container?: ContainerMark | null;
  note?: RecordNote;
  /** The run's budget; written when it changes (absent in a run that never had one). */
  budget?: Budget | null;
  /** With a cost budget: what the run has cost so far, in US dollars at list prices; written when it changes. */
  costUsd?: number | null;
  /** On the BUDGET_REACHED record: which budget, what was spent, the limit; written when it changes. */
  budgetStop?: BudgetStop | null;
  /**
   * Written by a file store's appendBatch: how many records after this one belong to the same
   * atomic unit. A reader takes a unit whole or not at all (an older one ignores the field and
   * may take the first records of a unit cut off by a power loss: a state that was durable too).
   */
  more?: number;
  /**
   * Set on a snapshot record: the record holds the whole state (every field, lists from 0), so
   * a resume may start reading here. Absent on every other record.
   */
  snapshot?: SnapshotMark;
  /**
   * Set on a record that leaves the run in a final state (done, failed, cancelled, stopped at a
   * limit), written with the disk waited for: the state without its conversation, so that a
   * resume that only answers reads this one record (see FinalMark). An older reader ignores it
   * and folds the record as any other: the version stays the same.
   */
  final?: FinalMark;
}

/**
 * What a run ended with, whole: every field of the state but `messages`, and how many ledger
 * entries a resume from the last snapshot holds (the `resumed` event reports it). A resume that
 * takes the run no further (no message, nothing that reopens it) answers from this alone.
 */
export interface FinalMark {
  context: Omit<AgentContext, 'messages'>;
  ledgerEntries: number;
}

/** What makes a full record a snapshot a resume can start from, and check. */
export interface SnapshotMark {
  /** The record it follows: its number and the CRC-32 of its JSON (the checksum of its line). */
  after: { seq: number; crc: string };
  /** Ledger entries the state refers to that `results` does not hold (a tool_result in messages, a pending call's). */
  ledger: ToolOutcome[];
}

export function isLedgerRef(block: EncodedBlock): block is LedgerRef {
  return typeof (block as LedgerRef).$ledger === 'string' && !('type' in block);
}
