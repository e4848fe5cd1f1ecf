/**
 * The shapes a journal's values must have for the fold and every later reader (the resume, the
 * status, the visualizer) to walk them. A record passes its checksum even when an older version
 * wrote something it should have refused (a model reply with a null content block, token counts
 * that are not numbers): these checks turn such a record into a clear refusal, or read it
 * leniently where nothing is lost by doing so, never into a TypeError halfway through a resume.
 */
import { contentProblem } from '../../../machines/agent-loop.logic.ts';
import { DECISION_NEEDS, type TokenUsage } from '../../../machines/agent-loop.types.ts';

/** Token counts as stored: a figure that is not a number (NaN was stored as null) reads as 0. */
export function storedUsage(raw: unknown): TokenUsage {
  const fields = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
  const usage: TokenUsage = { input: figure(fields.input), output: figure(fields.output), cacheRead: figure(fields.cacheRead), cacheWrite: figure(fields.cacheWrite) };
  // Server tool requests, kept where a run made some (their cost is in costUsd).
  if (fields.webSearchRequests !== undefined) usage.webSearchRequests = figure(fields.webSearchRequests);
  if (fields.webFetchRequests !== undefined) usage.webFetchRequests = figure(fields.webFetchRequests);
  return usage;
}

/** Why a stored code execution container cannot be read, or null. */
export function containerProblem(container: unknown): string | null {
  if (container === null) return null;
  const { id, expiresAt } = (container ?? {}) as Record<string, unknown>;
  if (typeof container !== 'object' || typeof id !== 'string' || id === '' || typeof expiresAt !== 'string') return 'the code execution container is not an id and an expiry';
  return null;
}

function figure(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** Why a stored message (its ledger references not yet resolved) cannot be read, or null. */
export function messageProblem(message: unknown, isLedgerRef: (block: unknown) => boolean): string | null {
  if (message === null || typeof message !== 'object') return 'a message is not an object';
  const { role, content } = message as { role?: unknown; content?: unknown };
  if (role !== 'user' && role !== 'assistant') return `a message has the role ${JSON.stringify(role) ?? 'undefined'}`;
  if (typeof content === 'string') return null;
  if (!Array.isArray(content)) return `an ${role} message has no content`;
  if (everyBlockReadable(content, isLedgerRef)) return null;
  const problem = contentProblem(content.map((block) => (isLedgerRef(block) ? { type: 'tool_result' } : block)));
  if (!problem) return null;
  return role === 'assistant'
    ? `an assistant message's ${problem}: a model reply that should have been refused was stored (by an earlier version), and the conversation cannot be sent back to a model as it is`
    : `a user message's ${problem}`;
}

/**
 * What contentProblem accepts, a ledger reference standing for a tool_result block: checked in a
 * plain loop, since a resume checks every message of the run (contentProblem says what is wrong).
 */
function everyBlockReadable(content: readonly unknown[], isLedgerRef: (block: unknown) => boolean): boolean {
  for (let i = 0; i < content.length; i++) {
    const block = content[i];
    if (block !== null && typeof block === 'object' && !Array.isArray(block) && typeof (block as { type?: unknown }).type === 'string') continue;
    if (!isLedgerRef(block)) return false;
  }
  return true;
}

/** Why a stored ledger entry cannot be read, or null. */
export function outcomeProblem(outcome: unknown): string | null {
  if (outcome === null || typeof outcome !== 'object') return 'a ledger entry is not an object';
  const { tool_use_id: id, name, content, is_error: isError } = outcome as Record<string, unknown>;
  if (typeof id !== 'string' || typeof name !== 'string') return 'a ledger entry lacks its tool_use_id or name';
  if (typeof content !== 'string' && !Array.isArray(content)) return `the ledger entry of ${id} has no content`;
  if (typeof isError !== 'boolean') return `the ledger entry of ${id} does not say whether it is an error`;
  return null;
}

/** Why a stored pending call cannot be read, or null. */
export function pendingProblem(call: unknown): string | null {
  if (call === null || typeof call !== 'object') return 'a pending call is not an object';
  const { id, name, needs } = call as Record<string, unknown>;
  if (typeof id !== 'string' || typeof name !== 'string') return 'a pending call lacks its id or name';
  // A flag this version does not know must not read as "needs nothing": the call would run unasked.
  if (needs !== undefined && !(DECISION_NEEDS as readonly unknown[]).includes(needs)) return `the pending call ${id} needs ${JSON.stringify(needs)}, which this version does not know`;
  return null;
}

const VERDICTS: readonly unknown[] = ['approved', 'denied', 'answered'];

/** Why a stored decision cannot be read, or null. */
export function decisionProblem(decision: unknown): string | null {
  if (decision === null || typeof decision !== 'object') return 'a decision is not an object';
  const { tool_use_id: id, verdict, by, at } = decision as Record<string, unknown>;
  if (typeof id !== 'string') return 'a decision lacks its tool_use_id';
  if (!VERDICTS.includes(verdict)) return `the decision about ${id} has the verdict ${JSON.stringify(verdict) ?? 'undefined'}`;
  if (typeof by !== 'string' || typeof at !== 'number') return `the decision about ${id} does not say who made it, or when`;
  return null;
}

/** Why a stored awaited call (null: none) cannot be read, or null. */
export function awaitedProblem(awaiting: unknown): string | null {
  if (awaiting === null) return null;
  if (typeof awaiting !== 'object') return 'the awaited call is not an object';
  const { tool_use_id: id, since } = awaiting as Record<string, unknown>;
  return typeof id === 'string' && typeof since === 'number' ? null : 'the awaited call lacks its tool_use_id or time';
}

/** Why stored compaction totals (null: none) cannot be read, or null. */
export function compactedProblem(compacted: unknown): string | null {
  if (compacted === null) return null;
  if (typeof compacted !== 'object') return 'the compaction totals are not an object';
  const { times, messages, replies } = compacted as Record<string, unknown>;
  const count = (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
  return count(times) && count(messages) && count(replies) ? null : 'the compaction totals are not counts';
}
