/**
 * The HTTP API's wire format, version 1: what `durable-agent serve` answers and what the client
 * (`durable-agent/client`) reads. Plain types with no import of the runtime, so that a browser
 * bundle of the client carries none of it. The server's route schemas are held equal to these by
 * a type test; change both together, and a change that removes or renames a field is version 2.
 */

/** The categories a list filters by (`?state=`), as `durable-agent list --state` takes them. */
export type ApiRunCategory = 'running' | 'waiting' | 'paused' | 'failed' | 'stopped' | 'cancelled' | 'done' | 'unreadable';

/** What a run waits for, as data. */
export type ApiWaitingOn =
  | { kind: 'call'; toolUseId: string; name: string | null; needs: string | null; since: number | null }
  | { kind: 'runs'; runIds: string[] }
  | { kind: 'agent'; agent: string };

/** A run seen from outside: the same model `durable-agent list` and `status` print, without server paths. */
export interface ApiRun {
  runId: string;
  source: 'folder' | 'fleet';
  /** The machine's state name (for example 'awaitingModel', 'awaitingDecision', 'done'); null when unreadable. */
  state: string | null;
  category: ApiRunCategory;
  task: string;
  turn: number;
  maxTurns: number | null;
  tokens: number | null;
  costUsd: number | null;
  /** Epoch milliseconds of its last record. */
  updatedAt: number | null;
  /** What it waits for, in words; null when it waits for nothing. */
  waitsFor: string | null;
  waitingOn: ApiWaitingOn | null;
  agent: { name: string; version: string | null } | null;
  pausedBy: string | null;
  tenant: string;
  /** The model's last reply text once the run is done; null before. */
  result: string | null;
  /** Why it failed or stopped, in words; null otherwise. */
  problem: string | null;
}

/** POST /v1/runs. `runId` (or an `Idempotency-Key` header) makes a retry find the run it started, never start a second. */
export interface StartRunBody {
  agent: string;
  task: string;
  runId?: string;
  /** Only a token of every tenant may name one; a tenant's token starts runs of its own tenant. */
  tenant?: string;
}

/** 201 when the run was started, 200 when the same request had started it already. */
export interface StartRunAnswer {
  run: ApiRun;
  created: boolean;
}

/** GET /v1/runs/:id */
export interface GetRunAnswer {
  run: ApiRun;
}

/** GET /v1/runs?state=&tenant=&cursor=&limit= : newest first; `next` is the cursor of the following page, null at the end. */
export interface ListRunsAnswer {
  runs: ApiRun[];
  next: string | null;
}

/** POST /v1/runs/:id/decisions */
export interface DecisionBody {
  toolUseId: string;
  verdict: 'approve' | 'deny';
  reason?: string;
  /** An edited input the tool runs with instead of the model's (where the tool allows it). */
  input?: unknown;
}

/** POST /v1/runs/:id/answers */
export interface AnswerBody {
  toolUseId: string;
  answer: string;
}

/** POST /v1/runs/:id/signals */
export interface SignalBody {
  name: string;
  data?: unknown;
}

/** POST /v1/runs/:id/{decisions,answers,signals,cancel,pause,unpause}: 202, the request is in the run's inbox. */
export interface SteerAnswer {
  accepted: true;
  runId: string;
}

/** Every 4xx and 5xx answer. */
export interface ApiErrorBody {
  error: {
    /** A stable word a program can switch on: 'unauthorized', 'forbidden', 'not-found', 'conflict', 'invalid', 'too-large', 'internal'. */
    code: string;
    /** What happened and what to do next, in words. */
    message: string;
  };
}

/**
 * GET /v1/runs/:id/events: Server-Sent Events. Every event drawn from the journal carries its
 * record's number (`seq`), and the last event of each record carries the SSE id `String(seq)` (a
 * record's events are sent together); a client reconnecting with `Last-Event-ID: N` (or
 * `?after=N`) gets every event of the records after N, none twice, and a connection cut inside a
 * record resumes before it. `text-delta` events carry no id: they are the model's text as
 * it streams, not yet in any record; the `reply` event of the recorded reply supersedes them (after
 * a crash, the deltas a client saw may differ from the recorded reply: `reply.supersedesDeltas`).
 * The stream ends after `end`.
 */
export type RunEvent =
  | { type: 'state'; seq: number; at: number; state: string; turn: number | null }
  | { type: 'text-delta'; text: string }
  | { type: 'reply'; seq: number; text: string; supersedesDeltas: true }
  | { type: 'tool-call'; seq: number; toolUseId: string; name: string; input: unknown }
  | { type: 'tool-result'; seq: number; toolUseId: string; isError: boolean; content: unknown }
  | { type: 'waiting'; seq: number; waitingOn: ApiWaitingOn; waitsFor: string }
  | { type: 'end'; seq: number; state: string; category: ApiRunCategory; result: string | null; problem: string | null };

export type RunEventType = RunEvent['type'];
