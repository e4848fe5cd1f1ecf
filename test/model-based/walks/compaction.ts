/**
 * Client compaction's walk: a reply long enough to take the context over the trigger (a tool
 * turn, or a pause), the COMPACT the runtime then has no choice but to take, the summary (or one
 * without text), and an ending.
 */
import type { Message } from '../../../machines/agent-loop.types.ts';
import { stopReply, toolUseReply } from '../../../src/model/scripted-model.ts';
import { endTurnEvent, isReply, type PathEvent, type Snapshot, type WalkContext } from './path-event.ts';

/** A reply this long takes the context over the compaction trigger of a scenario (see scenario-runner). */
export const LONG_TEXT = `${'a long reply '.repeat(700)}`;

/** By message: the walk asks about the same messages in every state it serializes, and a message is never changed. */
const longTextHeld = new WeakMap<Message, boolean>();

export function holdsLongText(message: Message): boolean {
  let holds = longTextHeld.get(message);
  if (holds === undefined) {
    holds = message.role === 'assistant' && JSON.stringify(message.content).includes(LONG_TEXT);
    longTextHeld.set(message, holds);
  }
  return holds;
}

/** Where the runtime cuts the context: before the last assistant message (the long one is the last turn). */
function lastAssistantIndex(messages: readonly Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'assistant') return i;
  return -1;
}

/** What compaction decides in this state; null where it decides nothing. */
export function compactionEvents(snapshot: Snapshot): PathEvent[] | null {
  const state = snapshot.value;
  const { context } = snapshot;
  const asksModel = state === 'awaitingModel' || state === 'closed';
  if (asksModel && !context.compacted && context.messages.some(holdsLongText)) {
    // The runtime has no choice here: the context is over the trigger, and it compacts before the next model call.
    return [{ type: 'COMPACT', estimatedTokens: 1, limit: 1, keepFrom: lastAssistantIndex(context.messages), label: 'compact' }];
  }
  // After a compaction, one ending is enough: what follows a model call is walked elsewhere.
  if (asksModel && context.compacted) return [endTurnEvent()];
  if (state === 'compacting') {
    const summary: Message = { role: 'user', content: [{ type: 'text', text: 'summary' }] };
    const empty = stopReply('end_turn');
    return [
      { type: 'COMPACTED', summary, replaced: lastAssistantIndex(context.messages), label: 'summary' },
      { type: 'MODEL_REPLY_INVALID', label: 'summary: no text', reason: 'the summarising reply holds no text', usage: empty.usage, reply: empty },
    ];
  }
  return null;
}

/** Replies that take the context over the compaction trigger, as the run's first: a tool turn, and a pause. */
export function longReplies(context: WalkContext): PathEvent[] {
  if (context.messages.length !== 1) return [];
  return [
    { type: 'MODEL_REPLY', label: 'reply: lookup (long)', reply: toolUseReply([{ id: 't1_long', name: 'lookup', input: { q: 'long' } }], LONG_TEXT) },
    { type: 'MODEL_REPLY', label: 'reply: pause_turn (long)', reply: stopReply('pause_turn', LONG_TEXT) },
  ];
}

/** The cross walk of compaction: a long reply, the compaction it brings, its summary, the end. */
export function inCompactionWalk(event: PathEvent, { context }: { context: WalkContext }): boolean {
  return !isReply(event) || event.label.endsWith('(long)') || context.messages.some(holdsLongText);
}
