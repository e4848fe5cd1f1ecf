/**
 * The tool_use ids a new reply must not use again (see replyProblem): those of the live
 * context. What compaction took out of the context is no longer in any request, nor in what
 * the process holds of the ledger (a compaction's record is a snapshot, which keeps only the
 * entries the context refers to), and a resumed process knows only the context it loaded: so
 * the rule is the same whether the run was resumed or not. Kept for the whole run, the ids
 * would grow by one a turn, however short the context is kept.
 */
import { toolUsesOf } from '../../machines/agent-loop.logic.ts';
import type { AgentContext, Message, ModelReply } from '../../machines/agent-loop.types.ts';

export class LiveToolUseIds {
  private ids = new Set<string>();
  /** context.compacted.messages when the ids were last taken from the messages (-1: never). */
  private takenAt = -1;

  /** The ids as of this context: taken again from its messages once compaction has cut them. */
  of(context: AgentContext): ReadonlySet<string> {
    const compacted = context.compacted?.messages ?? 0;
    if (compacted !== this.takenAt) {
      this.ids = idsIn(context.messages);
      this.takenAt = compacted;
    }
    return this.ids;
  }

  /** A reply the run acted on: its calls' ids are in the context from now on. */
  add(reply: ModelReply): void {
    for (const block of toolUsesOf(reply)) this.ids.add(block.id);
  }
}

function idsIn(messages: readonly Message[]): Set<string> {
  const ids = new Set<string>();
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const block of message.content) if (block.type === 'tool_use') ids.add(block.id as string);
  }
  return ids;
}
