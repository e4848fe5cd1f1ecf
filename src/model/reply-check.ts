/** Checks a model reply before the loop acts on it; a reply that breaks the protocol is refused, not guessed at. */
import { isToolUseBlock } from '../../machines/agent-loop.logic.ts';
import type { ModelReply } from '../../machines/agent-loop.types.ts';

export function replyProblem(reply: ModelReply, usedToolUseIds: ReadonlySet<string>): string | null {
  if (!Array.isArray(reply.content)) return 'the reply has no content list';
  const toolUses = reply.content.filter((block) => block?.type === 'tool_use');
  const seen = new Set<string>();
  for (const block of toolUses) {
    if (!isToolUseBlock(block) || block.id === '') return 'a tool_use block lacks its id or name';
    if (seen.has(block.id)) return `tool_use_id ${block.id} appears twice in one reply`;
    if (usedToolUseIds.has(block.id)) return `tool_use_id ${block.id} was already used earlier in this run`;
    seen.add(block.id);
  }
  if (reply.stop_reason === 'tool_use' && toolUses.length === 0) return 'stop_reason is tool_use but the reply names no tool';
  if (reply.stop_reason === 'pause_turn' && toolUses.length > 0) return 'a pause_turn reply named a tool to run';
  return null;
}
