/**
 * The core loop's walk: a read-only call, a side effect, a call of each before a side effect that
 * can be checked, three tools in one turn, the stop reasons (end_turn, max_tokens, refusal, one
 * pause continued and one too many), replies the runtime refuses, and tools that run, throw,
 * return what JSON cannot hold, or whose ledger write fails.
 */
import type { ContentBlock, ModelReply, PendingCall } from '../../../machines/agent-loop.types.ts';
import { stopReply, toolUseReply } from '../../../src/model/scripted-model.ts';
import { endTurnEvent, type PathEvent, type ToolBehaviour, toolResultEvent, type WalkContext } from './path-event.ts';

export const PAUSE_TEXT = 'searching…';

/** Replies before the model call of turn `t`. */
export function coreReplies(context: WalkContext, t: number): PathEvent[] {
  const cutOff: ModelReply = { ...toolUseReply([{ id: `t${t}_cut`, name: 'send_email', input: { to: 'cut' } }]), stop_reason: 'max_tokens' };
  const invalid: ModelReply = { content: [{ type: 'text', text: 'I will use a tool.' }], stop_reason: 'tool_use', usage: { input: 100, output: 9, cacheRead: 0, cacheWrite: 0 } };
  const events: PathEvent[] = [
    { type: 'MODEL_REPLY', label: 'reply: lookup', reply: toolUseReply([{ id: `t${t}_lookup`, name: 'lookup', input: { q: `q${t}` } }]) },
    { type: 'MODEL_REPLY', label: 'reply: send_email', reply: toolUseReply([{ id: `t${t}_email`, name: 'send_email', input: { to: `to${t}` } }]) },
    {
      type: 'MODEL_REPLY',
      label: 'reply: lookup + charge_card',
      reply: toolUseReply([
        { id: `t${t}_lookup`, name: 'lookup', input: { q: `p${t}` } },
        { id: `t${t}_charge`, name: 'charge_card', input: { amount: t } },
      ]),
    },
    endTurnEvent(),
    { type: 'MODEL_REPLY', label: 'reply: max_tokens', reply: cutOff },
    { type: 'MODEL_REPLY', label: 'reply: refusal', reply: stopReply('refusal') },
    { type: 'MODEL_REPLY_INVALID', label: 'reply: invalid', reason: 'stop_reason is tool_use but the reply names no tool', usage: invalid.usage, reply: invalid },
  ];
  if (t === 1) {
    // Replies the runtime refuses before the machine acts on them; one turn is enough to cover them.
    const nullBlock: ModelReply = { ...toolUseReply([{ id: 't1_null', name: 'lookup', input: { q: 'null' } }]) };
    nullBlock.content = [...nullBlock.content, null as unknown as ContentBlock];
    const endsWithTool: ModelReply = { ...toolUseReply([{ id: 't1_end', name: 'send_email', input: { to: 'end' } }]), stop_reason: 'end_turn' };
    events.push(
      { type: 'MODEL_REPLY_INVALID', label: 'reply: null block', reason: 'content block 1 is null, not a content block', usage: nullBlock.usage, reply: nullBlock },
      { type: 'MODEL_REPLY_INVALID', label: 'reply: end_turn naming a tool', reason: 'the reply ended the turn but named tools', usage: endsWithTool.usage, reply: endsWithTool },
      {
        type: 'MODEL_REPLY',
        label: 'reply: three tools',
        reply: toolUseReply([
          { id: `t${t}_lookup`, name: 'lookup', input: { q: 'three' } },
          { id: `t${t}_email`, name: 'send_email', input: { to: 'three' } },
          { id: `t${t}_charge`, name: 'charge_card', input: { amount: 3 } },
        ]),
      },
    );
  }
  // One series of pauses per run keeps the graph finite (each pause adds a message): a pause,
  // and right after it a second, which is one too many. The paused reply carries no usage.
  const pauses = context.messages.filter((m) => m.role === 'assistant' && JSON.stringify(m.content).includes(PAUSE_TEXT)).length;
  if (pauses === 0 || (pauses === 1 && context.pausesInARow === 1)) {
    const pause = stopReply('pause_turn', PAUSE_TEXT);
    events.push({ type: 'MODEL_REPLY', label: 'reply: pause_turn', reply: pause, sent: { ...pause, usage: undefined } });
  }
  return events;
}

/**
 * One call in flight (it runs alone, or it is the last of the turn): only the first open call can
 * finish next. A turn of three calls is walked with every call succeeding, to keep the graph
 * small. A result JSON cannot hold is tried on single-call turns (a read-only and a side-effecting
 * tool). A turn with a decision walks its calls running or throwing only: the ledger's failures
 * are walked elsewhere.
 */
export function coreResults(context: WalkContext, call: PendingCall): PathEvent[] {
  const behaviours: readonly ToolBehaviour[] = context.pending.some((pending) => pending.needs)
    ? ['ok', 'throws']
    : context.pending.length > 2
      ? ['ok']
      : context.pending.length === 1
        ? ['ok', 'throws', 'ledger-write-fails', 'unserializable']
        : ['ok', 'throws', 'ledger-write-fails'];
  return behaviours.map((behaviour) => toolResultEvent(call, behaviour));
}
