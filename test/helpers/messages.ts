/** Checks that a conversation is one the Messages API accepts, as far as tool use goes. */
import type { ContentBlock, Message } from '../../machines/agent-loop.types.ts';

export function toolUseProblems(messages: readonly Message[]): string[] {
  const problems: string[] = [];
  messages.forEach((message, index) => {
    if (message.role !== 'assistant' || typeof message.content === 'string') return;
    const ids = message.content.filter((b) => b.type === 'tool_use').map((b) => b.id as string);
    if (ids.length === 0) return;
    const next = messages[index + 1];
    if (next?.role !== 'user' || typeof next.content === 'string') {
      problems.push(`message ${index}: tool_use ${ids.join(',')} has no user message of tool_results after it`);
      return;
    }
    const blocks: ContentBlock[] = next.content;
    const results = blocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id as string);
    const firstNonResult = blocks.findIndex((b) => b.type !== 'tool_result');
    if (firstNonResult !== -1 && firstNonResult < results.length) problems.push(`message ${index + 1}: tool_results are not first`);
    for (const id of ids) {
      const count = results.filter((r) => r === id).length;
      if (count !== 1) problems.push(`message ${index + 1}: tool_use ${id} answered ${count} times`);
    }
    for (const id of results) if (!ids.includes(id)) problems.push(`message ${index + 1}: tool_result ${id} answers no tool_use`);
  });
  return problems;
}

export function toolResultOf(messages: readonly Message[], id: string): ContentBlock | undefined {
  for (const message of messages) {
    if (typeof message.content === 'string') continue;
    const found = message.content.find((b) => b.type === 'tool_result' && b.tool_use_id === id);
    if (found) return found;
  }
  return undefined;
}
