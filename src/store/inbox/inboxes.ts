/**
 * The inboxes beside a run's journal: what other processes ask of the run's writer. Only the
 * writer writes the journal; a person's decision about a call, or a request to cancel or pause,
 * is written to the run's inbox, and the writer turns it into a record. Each store keeps its
 * own (files beside the journal, rows in PostgreSQL); the contracts and what counts as a whole
 * entry are here, one rule for every store.
 */
import type { Decision, Verdict } from '../../../machines/agent-loop.types.ts';

export type InboxDecision = Decision;

/**
 * Where decisions wait for the run's writer. One decision per call: a second is 'exists',
 * nothing written. settle() is called once the DECISION record is durable.
 */
export interface DecisionInbox {
  write(decision: InboxDecision): Promise<'written' | 'exists'>;
  /** The whole decisions (an entry that is not one is left out: see unreadable). */
  read(): Promise<InboxDecision[]>;
  /**
   * Optional: the decision for one call, or null, without reading the others; throws
   * InboxFileError for an entry that is there but is no decision. Without it, read() is searched.
   */
  get?(tool_use_id: string): Promise<InboxDecision | null>;
  settle(tool_use_id: string): Promise<void>;
  /** Where the call's entry is there but is no decision: its file and why (an inbox whose entries cannot be damaged has none). */
  unreadable?(tool_use_id: string): { file: string; problem: string } | null;
}

export type ControlKind = 'cancel' | 'pause';

export const CONTROL_KINDS: readonly ControlKind[] = ['cancel', 'pause'];

export interface ControlRequest {
  kind: ControlKind;
  /** Who asked: a user name with host and pid from the CLI, what a program passes otherwise. */
  by: string;
  /** Why (cancel --reason); null when none was given. */
  reason: string | null;
  /** Epoch milliseconds when it was asked. */
  at: number;
}

/**
 * Where control requests wait for the run's writer. One request per kind at a time (a second
 * cancel is 'exists', nothing written); a request is whole or absent, whatever kills the writer.
 */
export interface ControlInbox {
  write(request: ControlRequest): Promise<'written' | 'exists'>;
  /** Cheap when empty (one stat, readdir or indexed query): called at every step boundary. */
  read(): Promise<ControlRequest[]>;
  /** Removes the request of this kind (once what it asked is durable, or a resume cleared a pause). */
  settle(kind: ControlKind): Promise<void>;
}

const VERDICTS: readonly Verdict[] = ['approved', 'denied', 'answered'];

/** Why a stored decision is not a whole one about this call, or null. */
export function decisionProblem(value: unknown, tool_use_id: string): string | null {
  const decision = value as Partial<Decision> | null;
  if (!decision || typeof decision !== 'object') return 'it holds no decision';
  if (decision.tool_use_id !== tool_use_id) return `it is about ${String(decision.tool_use_id)}, not ${tool_use_id}`;
  if (!VERDICTS.includes(decision.verdict as Verdict)) return `its verdict is ${String(decision.verdict)}`;
  if (typeof decision.by !== 'string' || !Number.isFinite(decision.at)) return 'it does not say who decided and when';
  for (const field of ['note', 'reason', 'text'] as const) {
    if (decision[field] !== undefined && typeof decision[field] !== 'string') return `its ${field} is not text`;
  }
  if (decision.verdict === 'denied' && typeof decision.reason !== 'string') return 'a denial without a reason';
  if (decision.verdict === 'answered' && typeof decision.text !== 'string') return 'an answer without text';
  return null;
}

/** Why a stored request is not a whole one (of this kind, when given), or null. */
export function controlProblem(value: unknown, kind?: ControlKind): string | null {
  const request = value as Partial<ControlRequest> | null;
  if (request === null || typeof request !== 'object') return 'it holds no request';
  if (!CONTROL_KINDS.includes(request.kind as ControlKind)) return `its kind is ${String(request.kind)}`;
  if (typeof request.by !== 'string' || request.by.trim() === '') return 'it does not say who asked';
  if (request.reason !== null && typeof request.reason !== 'string') return 'its reason is not text';
  if (typeof request.at !== 'number' || !Number.isFinite(request.at)) return 'it does not say when';
  if (kind !== undefined && request.kind !== kind) return `it is a ${request.kind} request, not a ${kind} request`;
  return null;
}
