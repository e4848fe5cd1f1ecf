/**
 * Parallel calls' walk: read-only calls side by side, finishing in every order, all at once
 * (their outcomes group-committed), and before a side effect.
 */
import { openCalls } from '../../../machines/agent-loop.logic.ts';
import type { PendingCall } from '../../../machines/agent-loop.types.ts';
import { toolUseReply } from '../../../src/model/scripted-model.ts';
import { isReply, type PathEvent, PAUSE_LIMIT, toolResultEvent, type WalkContext } from './path-event.ts';

/** Tools whose calls run side by side (read-only); every other call runs alone, in the model's order. */
export const OVERLAPPING_TOOLS: ReadonlySet<string> = new Set(['lookup']);

/** Labels of the replies whose read-only calls run side by side and may finish in any order. */
export const PARALLEL_REPLIES = new Set(['reply: three lookups', 'reply: two lookups + charge_card']);
/** The reply whose read-only calls all finish together (their outcomes group-committed). */
export const TOGETHER_REPLY = 'reply: three lookups together';
/** Its calls' ids: the walk tells its turn from the others by them. */
export const TOGETHER_IDS = ['t1_ga', 't1_gb', 't1_gc'];

/**
 * The open calls that may finish next, as the tool scheduler starts them: the calls before the
 * first that runs alone (up to toolConcurrency, 4, more than any reply here holds), or that one alone.
 */
export function startableCalls(context: WalkContext): ReturnType<typeof openCalls> {
  const open = openCalls(context);
  const alone = open.findIndex((call) => call.needs !== undefined || !OVERLAPPING_TOOLS.has(call.name));
  return alone === 0 ? open.slice(0, 1) : open.slice(0, alone === -1 ? open.length : alone);
}

/** The turn just closed ran read-only calls side by side (the ids only those replies use). */
export function closedParallelTurn(context: WalkContext): boolean {
  const content = JSON.stringify(context.messages.at(-2)?.content ?? '');
  return content.includes('"t1_a"') || content.includes(`"${TOGETHER_IDS[0]}"`);
}

/** The run's first reply, walked once (the simple paths of MAX_TURNS=1). */
export function parallelReplies(context: WalkContext): PathEvent[] {
  if (!(context.messages.length === 1 && context.maxTurns === 1 && context.maxPausesInARow === PAUSE_LIMIT)) return [];
  return [
    {
      type: 'MODEL_REPLY',
      label: 'reply: three lookups',
      reply: toolUseReply(['a', 'b', 'c'].map((x) => ({ id: `t1_${x}`, name: 'lookup', input: { q: x } }))),
    },
    {
      type: 'MODEL_REPLY',
      label: 'reply: two lookups + charge_card',
      reply: toolUseReply([
        { id: 't1_a', name: 'lookup', input: { q: 'a' } },
        { id: 't1_b', name: 'lookup', input: { q: 'b' } },
        { id: 't1_charge', name: 'charge_card', input: { amount: 2 } },
      ]),
    },
    // Three lookups that come back at once: their outcomes share writes (group commit).
    { type: 'MODEL_REPLY', label: TOGETHER_REPLY, reply: toolUseReply(TOGETHER_IDS.map((id) => ({ id, name: 'lookup', input: { q: id } }))) },
  ];
}

/** Which call may finish next in a turn of calls side by side; null where one call is in flight. */
export function parallelResults(context: WalkContext, call: PendingCall): PathEvent[] | null {
  if (TOGETHER_IDS.includes(call.id)) {
    // They come back at once, in the model's order, and are recorded in that order: one path.
    return [toolResultEvent(call, 'ok', `${call.name} ${call.id.slice(3)} ran`)];
  }
  const startable = startableCalls(context);
  // Calls in flight side by side: any of them may finish next (each runs, to keep the graph small).
  return startable.length > 1 ? startable.map((open) => toolResultEvent(open, 'ok', `${open.name} ${open.id.slice(3)} ran`)) : null;
}

const PARALLEL_CROSS_REPLIES = new Set([...PARALLEL_REPLIES, TOGETHER_REPLY]);

/** The cross walk of parallel calls: their replies, then what follows them. */
export function inParallelWalk(event: PathEvent, { context }: { context: WalkContext }): boolean {
  return !isReply(event) || PARALLEL_CROSS_REPLIES.has(event.label) || context.turn > 0;
}
