/**
 * Checks a model reply before the loop acts on it. A reply comes from outside (an API, a
 * gateway, a user's own Model), so nothing in it is trusted: a token figure it leaves out counts
 * as 0 (and the run says so), a figure it gives that is not a whole number of tokens makes the
 * reply refused (a budget must never count it as nothing), and a reply that breaks the protocol
 * or the shape of the Messages API is refused, never guessed at.
 */
import { contentProblem, isToolUseBlock, isToolUseId, SERVER_TOOL_USAGE } from '../../machines/agent-loop.logic.ts';
import type { ContentBlock, ModelReply, TokenUsage } from '../../machines/agent-loop.types.ts';
import { ZERO_USAGE } from '../../machines/agent-loop.types.ts';

/** A reply as the loop acts on it: its tokens counted apart (they are recorded the moment it arrives). */
export interface ReceivedReply {
  /** The reply with its usage set to zero: the tokens are in `usage`, counted once. */
  reply: ModelReply;
  usage: TokenUsage;
  /** Why some token figures were counted as 0, when they were. */
  usageNote: string | null;
  /** A figure given that cannot be counted (fractional, text, negative, too large): the reply is refused for it. */
  usageProblem: string | null;
}

export function receiveReply(raw: unknown): ReceivedReply {
  const fields = raw !== null && typeof raw === 'object' ? (raw as Partial<Record<keyof ModelReply, unknown>>) : {};
  const { usage, note, problem } = usageOf(fields.usage);
  const stopReason = typeof fields.stop_reason === 'string' ? fields.stop_reason : null;
  const reply: ModelReply = { ...(fields as object), content: fields.content as ContentBlock[], stop_reason: stopReason, usage: ZERO_USAGE };
  return { reply, usage, usageNote: note, usageProblem: problem };
}

const USAGE_FIELDS = ['input', 'output', 'cacheRead', 'cacheWrite'] as const;

/**
 * The reply's tokens: a figure left out (undefined or null) counts as 0 and is named in the note;
 * one given that is not a non-negative whole number (1000.5, "500", -3, 1e300) is the problem
 * that refuses the reply, and counts as 0 only in that refused reply's record.
 */
export function usageOf(raw: unknown): { usage: TokenUsage; note: string | null; problem: string | null } {
  if (raw === null || typeof raw !== 'object') {
    return { usage: { ...ZERO_USAGE }, note: 'the reply carried no usage; its tokens are counted as 0', problem: null };
  }
  const usage = { ...ZERO_USAGE };
  const missing: string[] = [];
  const uncountable: string[] = [];
  for (const field of USAGE_FIELDS) {
    const value = (raw as Record<string, unknown>)[field];
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) usage[field] = value;
    else if (value === undefined || value === null) missing.push(field);
    else uncountable.push(`${field} = ${figureText(value)}`);
  }
  // Server tool requests are there only when the reply used a server tool: absent is none, not a gap.
  for (const field of SERVER_TOOL_USAGE) {
    const value = (raw as Record<string, unknown>)[field];
    if (value === undefined || value === null) continue;
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) usage[field] = value;
    else uncountable.push(`${field} = ${figureText(value)}`);
  }
  return {
    usage,
    note: missing.length ? `the reply's usage lacked ${missing.join(', ')}; counted as 0` : null,
    problem: uncountable.length
      ? `its token usage cannot be counted (${uncountable.join(', ')}: not a whole number of tokens); a budget cannot count it as nothing`
      : null,
  };
}

function figureText(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

export function replyProblem(reply: ModelReply, usedToolUseIds: ReadonlySet<string>): string | null {
  if (!Array.isArray(reply.content)) return 'the reply has no content list';
  const shapeProblem = contentProblem(reply.content);
  if (shapeProblem) return shapeProblem;
  const toolUses = reply.content.filter((block) => block.type === 'tool_use');
  const seen = new Set<string>();
  for (const block of toolUses) {
    if (!isToolUseBlock(block) || block.id === '') return 'a tool_use block lacks its id or name';
    const id: string = block.id;
    if (!isToolUseId(id)) {
      const shown = JSON.stringify(id.length > 60 ? `${id.slice(0, 60)}…` : id);
      return `tool_use_id ${shown} is not an id the Messages API allows (letters, digits, "_" and "-", at most 128 of them)`;
    }
    if (seen.has(id)) return `tool_use_id ${id} appears twice in one reply`;
    if (usedToolUseIds.has(id)) return `tool_use_id ${id} was already used earlier in this run`;
    seen.add(id);
  }
  if (reply.stop_reason === 'tool_use' && toolUses.length === 0) return 'stop_reason is tool_use but the reply names no tool';
  if (reply.stop_reason === 'pause_turn' && toolUses.length > 0) return 'a pause_turn reply named a tool to run';
  if (reply.stop_reason === 'compaction' && toolUses.length > 0) return 'a compaction reply named a tool to run';
  if ((reply.stop_reason === 'end_turn' || reply.stop_reason === 'stop_sequence') && toolUses.length > 0) {
    // Acting on the calls would run tools the model did not wait for; ending the run would leave
    // them unanswered in the conversation. Neither is what the model said, so neither is done.
    return `the reply ended the turn (stop_reason=${reply.stop_reason}) but named tools; nothing was executed`;
  }
  return null;
}
