import type { Message } from '../../machines/agent-loop.types.ts';

/** tool_results whose tool_use is not in the message right before them (a cut in the wrong place). */
export function orphanResults(messages: readonly Message[]): string[] {
  return messages.flatMap((message, index) => {
    if (message.role !== 'user' || typeof message.content === 'string') return [];
    const before = messages[index - 1];
    const uses = before && typeof before.content !== 'string' ? before.content.filter((b) => b.type === 'tool_use').map((b) => b.id) : [];
    return message.content.filter((b) => b.type === 'tool_result' && !uses.includes(b.tool_use_id)).map((b) => `message ${index}: ${String(b.tool_use_id)}`);
  });
}
