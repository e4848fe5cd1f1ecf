/**
 * What a run reports as it goes, for the plain log, the TUI and tests. The runtime only emits;
 * how it looks is the reporters' business.
 */
import type {
  Cancellation,
  AgentStateName,
  Budget,
  BudgetStop,
  Decision,
  DecisionNeed,
  Message,
  ModelReply,
  PendingCall,
  RunFailure,
  TokenUsage,
  ToolOutcome,
} from '../../machines/agent-loop.types.ts';
import type { StreamDelta } from '../model/model.ts';
import type { StoreWriteError } from '../store/errors.ts';
import type { ReconcileOutcomeName, ReconcileRule, RecordEvent, RunOrigin } from '../store/journal/journal-record.ts';
import type { PointName } from '../store/journal/record-points.ts';
import type { RecoveredTornTail } from '../store/store.ts';

/** Where a run ended: a final state of the machine, or waiting for a person (test/machines/machine-structure.test.ts holds it to the machine). */
export type RunStatusName = 'done' | 'stoppedAtMaxTurns' | 'failed' | 'waiting' | 'cancelled' | 'stoppedAtBudget';

/** A call of the open turn that needs a decision and has none yet. */
export interface WaitingCall {
  runId: string;
  tool_use_id: string;
  name: string;
  input: unknown;
  needs: DecisionNeed;
  /** When it began to wait (its DECISION_NEEDED record); null for a later call of the turn not reached yet. */
  since: number | null;
  /** True for the call the run waits on now; the others come after it in the same turn. */
  awaited: boolean;
}

export interface RunResult {
  runId: string;
  /** 'waiting': the run stopped for a person's decision (wait: false); see `waiting`, and resume once decided. */
  status: RunStatusName;
  /** The calls that wait for a decision: set when status is 'waiting'. */
  waiting?: WaitingCall[] | undefined;
  /** The model's final answer, when done. */
  text: string | null;
  failure: RunFailure | null;
  turn: number;
  maxTurns: number;
  usage: TokenUsage;
  /** Who cancelled the run, why and when: set when status is 'cancelled'. */
  cancellation?: Cancellation | undefined;
  /** The run's budget, its cost so far (with a cost budget) and, when stoppedAtBudget, which budget stopped it: only for a run with a budget. */
  budget?: Budget | undefined;
  costUsd?: number | undefined;
  budgetStop?: BudgetStop | undefined;
}

export interface CallView extends PendingCall {
  /** null when the tool is not known to this process. */
  readOnly: boolean | null;
}

export type RunEvent =
  | { type: 'started'; runId: string; task: string; model: string; maxTurns: number; location: string; archivedPrevious: string | null }
  /** A start under the id of a run that had ended: its stored result follows ('finished'), and nothing ran. */
  | { type: 'attached'; runId: string; status: RunStatusName; location: string }
  | {
      type: 'resumed';
      runId: string;
      state: AgentStateName;
      turn: number;
      maxTurns: number;
      pending: CallView[];
      model: string;
      location: string;
      tornTail: RecoveredTornTail | null;
      task: string;
      usage: TokenUsage;
      ledgerEntries: number;
      /** The last record on disk when this process picked the run up. */
      lastSave: { seq: number; point: PointName; at: number; bytes: number };
      /** What started the run (null for a journal from before it was recorded). */
      startedBy: RunOrigin | null;
      /** How this resume differs from what started the run, gone on with because allowToolChange was set. */
      acceptedChanges: string[];
    }
  /** `message`: a finished conversation continued with the user's new message. */
  | { type: 'reopened'; previousState: AgentStateName; maxTurns: number; message?: string | undefined }
  /** The run's lock was taken from another holder (its heartbeat past the lease, or --take-over). */
  | { type: 'lock-taken-over'; holder: string; why: string; waitedMs: number }
  | {
      type: 'reconciled';
      call: CallView;
      decision: ReconcileOutcomeName;
      detail: string | null;
      /** Which rule decided, and where the trait it rests on came from (e.g. an MCP server's readOnlyHint). */
      rule?: ReconcileRule | null | undefined;
      basis?: string | null | undefined;
    }
  | {
      type: 'saved';
      point: PointName;
      label: string;
      seq: number;
      state: AgentStateName;
      event: RecordEvent;
      turn: number;
      maxTurns: number;
      pending: CallView[];
      recordedIds: string[];
      ledgerEntries: number;
      usage: TokenUsage;
      /** A run with a budget: its limits and cost so far (see RunResult). */
      budget?: Budget | undefined;
      costUsd?: number | undefined;
      budgetStop?: BudgetStop | undefined;
      bytes: number;
      at: number;
      /** False for bookkeeping written without waiting for the disk (a reply's tokens); it becomes durable with the next save. */
      durable: boolean;
      /** True for the checkpoint B that closes a turn left open by the crash this process resumed from. */
      closesResumedTurn: boolean;
      /** How long the store waited for the disk (fsync), when it says; null otherwise. */
      syncMs: number | null;
    }
  | {
      type: 'model-call';
      turn: number;
      /** The model's name, its provider ('anthropic') when it says, and what it is asked (for traces). */
      model: string;
      provider: string | null;
      maxTokens: number;
      system: string | null;
      messages: readonly Message[];
    }
  | {
      type: 'model-reply';
      stopReason: string | null;
      usage: TokenUsage;
      /** Set when some of the reply's token figures were missing and counted as 0. */
      usageNote: string | null;
      /** The reply as received (its content and the model that answered). */
      reply: ModelReply;
    }
  /** What the model's provider says about the requests that a person should hear (a deprecated model): once per model a run asks. */
  | { type: 'model-notice'; model: string; notice: string }
  /** A piece of the reply as it arrives (a streaming model): for a live view only, never recorded. */
  | { type: 'model-stream'; delta: StreamDelta }
  | { type: 'tool-started'; call: CallView; at: number }
  | { type: 'tool-finished'; call: CallView; outcome: ToolOutcome; ms: number }
  | { type: 'ledger-write-failed'; call: CallView; error: StoreWriteError }
  /** A call that waits for its child run queues it (child awaits): about to, and done (the child's id). */
  | { type: 'child-queueing'; call: CallView; at: number }
  | { type: 'child-queued'; call: CallView; childRunId: string; at: number }
  /** A call waits for a decision (its DECISION_NEEDED record is durable); `question` is ask_user's. */
  /** `unreadable`: the call's decision file is there but is no decision (damaged, a FIFO, a link): the run cannot take it. */
  | { type: 'waiting'; call: CallView; needs: DecisionNeed; since: number; question: string | null; unreadable?: { file: string; problem: string } | undefined }
  /** A decision about a call is durable (its DECISION record); an approved call runs next. */
  | { type: 'decided'; call: CallView; decision: Decision }
  | { type: 'finished'; result: RunResult };

export type RunObserver = (event: RunEvent) => void;

/** The observer of a run nobody watches: the events it would be given are not even made (isWatched). */
export const UNWATCHED: RunObserver = () => {};

/** Whether anyone takes the run's events: building one (a record's `saved` lists the open calls) is then worth it. */
export function isWatched(observer: RunObserver): boolean {
  return observer !== UNWATCHED;
}
