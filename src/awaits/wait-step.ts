/**
 * The `awaitDecision` effect for a wait call: what ends the wait, in order — the signal this call
 * took already (a resume after the take), a person's denial in the decisions inbox (to stop a
 * wait), a signal of the awaited event sent before the deadline (taken for this call, once), the
 * deadline (the input's time, counted from the DECISION_NEEDED record, so a resume never starts
 * the clock again). When none is at hand and the run may wait, it looks again every
 * DECISION_POLL_MS and at the deadline itself. Nothing here writes the journal: the driver makes
 * what it returns the DECISION record, as for a person's decision.
 */
import type { Decision, PendingCall } from '../../machines/agent-loop.types.ts';
import type { Signal } from '../store/inbox/signal-inbox.ts';
import type { SignalInbox } from '../store/store.ts';
import { awaitedCallOf, type DecisionWait, fromInbox, lookUntilFound } from './decision-step.ts';
import { formatSeconds, type WaitPlan, waitPlanOf } from './wait-tool.ts';

/** Who ends a wait whose time came. */
export const CLOCK = 'clock';

export interface WakeWait extends DecisionWait {
  signals: SignalInbox | undefined;
}

/** The plan of the wait the snapshot waits on (its input was checked when the call was flagged). */
export function awaitedWaitOf(wait: Pick<DecisionWait, 'context'>): { call: PendingCall; plan: WaitPlan } {
  const call = awaitedCallOf(wait.context);
  const plan = waitPlanOf(call.input, wait.context.awaiting!.since);
  if (!plan) throw new Error(`the wait call ${call.id} was flagged with an input that is not a wait`);
  return { call, plan };
}

/** The decision that ends the awaited wait, or null when none is at hand and the run is not to wait (or was asked to stop). */
export async function findWake(wait: WakeWait): Promise<Decision | null> {
  const { call, plan } = awaitedWaitOf(wait);
  const deadline = plan.wakeAt ?? Number.POSITIVE_INFINITY;
  // Said before the run may stop (a fleet worker lets go of the run): a claim reads it to take the run up again.
  await wait.signals?.expect?.({ tool_use_id: call.id, event: plan.event, wakeAt: plan.wakeAt });
  const look = async (): Promise<Decision | null> => {
    const bound = plan.event !== null ? await wait.signals?.takenBy(call.id) : null;
    if (bound) return signalDecision(call, bound);
    const given = await fromInbox(wait, call);
    if (given) return given;
    const taken = plan.event !== null ? await wait.signals?.take(plan.event, call.id, deadline) : null;
    if (taken) return signalDecision(call, taken);
    return Date.now() >= deadline ? clockDecision(call, plan, deadline, Date.now()) : null;
  };
  return lookUntilFound(look, deadline, wait);
}

/** The wait's result once its signal came: the event, who sent it and when, and its data. */
export function signalDecision(call: PendingCall, signal: Signal): Decision {
  const sent = `sent by ${signal.by} at ${new Date(signal.at).toISOString()}${signal.id === null ? '' : `, id ${signal.id}`}`;
  const data = signal.data === null || signal.data === undefined ? ' It carries no data.' : `\nIts data: ${JSON.stringify(signal.data)}`;
  return {
    tool_use_id: call.id,
    verdict: 'answered',
    by: signal.by,
    at: signal.at,
    text: `The event ${signal.name} arrived (${sent}).${data}`,
    signal: { name: signal.name, id: signal.id, sentAt: signal.at },
  };
}

/**
 * The wait's result once its time came, made at the deadline itself (`at`), whenever it is
 * recorded; a run that was stopped past it is told how late it goes on.
 */
export function clockDecision(call: PendingCall, plan: WaitPlan, deadline: number, now: number): Decision {
  const when = new Date(deadline).toISOString();
  const ended = plan.event === null ? `The wait is over (${plan.words}): it is ${when}.` : `No event ${plan.event} came within the time; the wait ended at ${when}.`;
  const lateMs = now - deadline;
  const late = lateMs >= 1000 ? ` The run was stopped meanwhile and goes on ${formatSeconds(Math.round(lateMs / 1000))} later, at ${new Date(now).toISOString()}.` : '';
  return { tool_use_id: call.id, verdict: 'answered', by: CLOCK, at: deadline, text: `${ended}${late}` };
}
