/**
 * Whose a decision is: a decision is about one call of one run, never about another call that
 * looks the same, nor about another run whose call has the same id, and a decision given while the
 * run is forked is taken by one side of the fork only. Three walks of approvals:
 *
 * - twins: one reply names the same tool twice with the same input (two calls, two ids), each
 *   approved, denied or left undecided on its own;
 * - after another run: before the walked run starts in a store, another run there stopped waiting
 *   for a call of the same id, and a person approved it in that run's inbox; the walked run starts
 *   afresh (the other one moved aside) with a call of that very id;
 * - fork while waiting: where the run waits for a decision that the path gives, a person writes it
 *   to the run's inbox, and the run is forked at that record (the decision written before the fork,
 *   or while it is under way, between its read of the parent and its write of the child).
 */
import { toolUseReply } from '../../../src/model/scripted-model.ts';
import type { PathEvent, Snapshot } from './path-event.ts';

export const TWINS_REPLY = 'reply: publish twice';
export const TWIN_IDS = ['t1_publish_a', 't1_publish_b'] as const;

/** The same tool, the same input, two calls: only their ids tell them apart. */
export function twinReply(): PathEvent {
  const input = { text: 'news' };
  return {
    type: 'MODEL_REPLY',
    label: TWINS_REPLY,
    reply: toolUseReply(TWIN_IDS.map((id) => ({ id, name: 'publish', input }))),
    needsDecision: Object.fromEntries(TWIN_IDS.map((id) => [id, 'approval' as const])),
  };
}

/** The twins walk: the twins as the run's first reply, then what follows them. */
export function twinEventsFor(snapshot: Snapshot, eventsFor: (snapshot: Snapshot) => PathEvent[]): PathEvent[] {
  if (isFirstReply(snapshot)) return [twinReply()];
  return eventsFor(snapshot);
}

/** The call of the other run, and of the walked one: the approval walk's publish (see walks/approval.ts). */
export const SHARED_CALL_ID = 't1_publish';
export const SHARED_CALL_INPUT = { text: 'news' };

/** Who decided the other run's call: a decision the walked run must never record. */
export const OTHER_RUN_DECIDER = 'a person, for the other run';

/** Who wrote the decision into the parent's inbox as it was forked. */
export const FORK_DECIDER = 'a person, while the run was forked';

/** When the person writes the decision: before the fork begins, or while it is under way. */
export type ForkMoment = 'before-fork' | 'during-fork';

const ONE_APPROVAL_REPLY = 'reply: publish + lookup';

/** The walk after another run: its publish as the first reply, then what follows it. */
export function afterAnotherRunEventsFor(snapshot: Snapshot, eventsFor: (snapshot: Snapshot) => PathEvent[]): PathEvent[] {
  const events = eventsFor(snapshot);
  return isFirstReply(snapshot) ? events.filter((event) => event.type === 'MODEL_REPLY' && event.label === ONE_APPROVAL_REPLY) : events;
}

/** The fork walk: every approval and question of the approval walk and the twins, every call running. */
export function forkEventsFor(snapshot: Snapshot, eventsFor: (snapshot: Snapshot) => PathEvent[], approvalLabels: ReadonlySet<string>): PathEvent[] {
  if (isFirstReply(snapshot)) return [...eventsFor(snapshot).filter((event) => event.type === 'MODEL_REPLY' && approvalLabels.has(event.label)), twinReply()];
  return eventsFor(snapshot).filter((event) => event.type !== 'TOOL_RESULT' || event.behaviour === 'ok');
}

function isFirstReply({ value, context }: Snapshot): boolean {
  return value === 'awaitingModel' && context.messages.length === 1;
}
