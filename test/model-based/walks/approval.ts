/**
 * Approvals' and questions' walk: an approval given or denied before another call, a question
 * answered or denied after one; nothing waits for a decision runs before it.
 */
import type { Decision } from '../../../machines/agent-loop.types.ts';
import { toolUseReply } from '../../../src/model/scripted-model.ts';
import { isReply, type PathEvent, type Snapshot, type WalkContext } from './path-event.ts';

export const APPROVAL_REPLIES: ReadonlySet<string> = new Set(['reply: publish + lookup', 'reply: lookup + ask_user']);

/** A person in the loop, as the run's first reply. */
export function approvalReplies(context: WalkContext): PathEvent[] {
  if (context.messages.length !== 1) return [];
  return [
    {
      type: 'MODEL_REPLY',
      label: 'reply: publish + lookup',
      reply: toolUseReply([
        { id: 't1_publish', name: 'publish', input: { text: 'news' } },
        { id: 't1_lookup', name: 'lookup', input: { q: 'after' } },
      ]),
      needsDecision: { t1_publish: 'approval' },
    },
    {
      type: 'MODEL_REPLY',
      label: 'reply: lookup + ask_user',
      reply: toolUseReply([
        { id: 't1_lookup', name: 'lookup', input: { q: 'before' } },
        { id: 't1_ask', name: 'ask_user', input: { question: 'Which one?' } },
      ]),
      needsDecision: { t1_ask: 'answer' },
    },
  ];
}

/** The decisions a waiting call may get: approved or denied; a question answered or denied. */
export function decisionEvents(snapshot: Snapshot): PathEvent[] {
  const { context } = snapshot;
  const call = context.pending.find((pending) => pending.id === context.awaiting?.tool_use_id)!;
  const decision = (verdict: Decision['verdict'], more: Partial<Decision>): PathEvent => ({
    type: 'DECISION',
    label: `${call.name} ${verdict}`,
    decision: { tool_use_id: call.id, verdict, by: 'api', at: 0, ...more },
  });
  const denied = decision('denied', { reason: 'not now' });
  return call.needs === 'answer' ? [decision('answered', { text: 'the second' }), denied] : [decision('approved', {}), denied];
}

/** The cross walk of approvals: their replies, then what follows them. */
export function inApprovalWalk(event: PathEvent, { context }: { context: WalkContext }): boolean {
  return !isReply(event) || APPROVAL_REPLIES.has(event.label) || context.turn > 0;
}
