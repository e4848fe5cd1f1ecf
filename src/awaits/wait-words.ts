/**
 * What a call waits for, in words: a person's approval or answer, or a wait's time or event, with
 * its deadline read from the journal (the wait's input and the time it began to wait), or the sub-agent
 * runs it queued. Said the same by every reader, the run summary among them (below the words layer).
 */
import type { DecisionNeed } from '../../machines/agent-loop.types.ts';
import { waitPlanOf } from './wait-tool.ts';

export interface WaitsFor {
  needs: DecisionNeed;
  input: unknown;
  /** When it began to wait; null for a later call of the turn, not reached yet. */
  since: number | null;
}

const CHILD_WORDS = 'the end of the sub-agent run it queued';

/** What each kind of await waits for, in a few words (no deadline): "approval", "its time or its event", … */
export function needWords(needs: DecisionNeed): string {
  switch (needs) {
    case 'answer':
      return 'an answer';
    case 'wait':
      return 'its time or its event';
    case 'child':
      return CHILD_WORDS;
    default:
      return 'approval';
  }
}

/** "approval", "an answer", "the time 2026-05-01T09:00:30.000Z (30 s)", "event deploy-done (until 2026-… at the latest)". */
export function waitsForWords(call: WaitsFor): string {
  if (call.needs === 'answer') return 'an answer';
  if (call.needs === 'approval') return 'approval';
  if (call.needs === 'child') return CHILD_WORDS;
  const plan = waitPlanOf(call.input, call.since ?? 0);
  if (!plan) return 'a wait';
  if (call.since === null && plan.wakeAt !== null && plan.words.indexOf('until') !== 0) return plan.event === null ? `${plan.words}, once it begins` : `event ${plan.event} (${plan.words.replace(/^.*\(at most (.*)\)$/, 'at most $1')} once it begins)`;
  const until = plan.wakeAt === null ? '' : new Date(plan.wakeAt).toISOString();
  if (plan.event === null) return `the time ${until} (${plan.words})`;
  return plan.wakeAt === null ? `event ${plan.event}` : `event ${plan.event} (until ${until} at the latest)`;
}

/** "its sub-agent run P.toolu_a", "its sub-agent runs P.toolu_a, P.toolu_b": the runs a run waits for. */
export function awaitedRunsWords(runIds: readonly string[]): string {
  return `its sub-agent run${runIds.length === 1 ? '' : 's'} ${runIds.join(', ')}`;
}
