/**
 * Checks a model reply before the loop acts on it. A reply comes from outside (an API, a
 * gateway, a user's own Model), so nothing in it is trusted: its token counts are read
 * leniently (a missing figure counts as 0, and the run says so), and a reply that breaks the
 * protocol or the shape of the Messages API is refused, never guessed at.
 */
import { contentProblem, isToolUseBlock } from '../../machines/agent-loop.logic.ts';
import type { ContentBlock, ModelReply, TokenUsage } from '../../machines/agent-loop.types.ts';
import { ZERO_USAGE } from '../../machines/agent-loop.types.ts';

/** A reply as the loop acts on it: its tokens counted apart (they are recorded the moment it arrives). */
export interface ReceivedReply {
  /** The reply with its usage set to zero: the tokens are in `usage`, counted once. */
  reply: ModelReply;
  usage: TokenUsage;
  /** Why some token figures were counted as 0, when they were. */
  usageNote: string | null;
}

export function receiveReply(raw: unknown): ReceivedReply {
  const fields = raw !== null && typeof raw === 'object' ? (raw as Partial<Record<keyof ModelReply, unknown>>) : {};
  const { usage, note } = usageOf(fields.usage);
  const stopReason = typeof fields.stop_reason === 'string' ? fields.stop_reason : null;
  const reply: ModelReply = { ...(fields as object), content: fields.content as ContentBlock[], stop_reason: stopReason, usage: ZERO_USAGE };
  return { reply, usage, usageNote: note };
}

const USAGE_FIELDS = ['input', 'output', 'cacheRead', 'cacheWrite'] as const;

/** Token figures that are not non-negative integers count as 0 (and are named in the note). */
export function usageOf(raw: unknown): { usage: TokenUsage; note: string | null } {
  if (raw === null || typeof raw !== 'object') {
    return { usage: { ...ZERO_USAGE }, note: 'the reply carried no usage; its tokens are counted as 0' };
  }
  const usage = { ...ZERO_USAGE };
  const missing: string[] = [];
  for (const field of USAGE_FIELDS) {
    const value = (raw as Record<string, unknown>)[field];
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) usage[field] = value;
    else missing.push(field);
  }
  return { usage, note: missing.length ? `the reply's usage lacked ${missing.join(', ')}; counted as 0` : null };
}

export function replyProblem(reply: ModelReply, usedToolUseIds: ReadonlySet<string>): string | null {
  if (!Array.isArray(reply.content)) return 'the reply has no content list';
  const shapeProblem = contentProblem(reply.content);
  if (shapeProblem) return shapeProblem;
  const toolUses = reply.content.filter((block) => block.type === 'tool_use');
  const seen = new Set<string>();
  for (const block of toolUses) {
    if (!isToolUseBlock(block) || block.id === '') return 'a tool_use block lacks its id or name';
    if (seen.has(block.id)) return `tool_use_id ${block.id} appears twice in one reply`;
    if (usedToolUseIds.has(block.id)) return `tool_use_id ${block.id} was already used earlier in this run`;
    seen.add(block.id);
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
