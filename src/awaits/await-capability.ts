/**
 * Every kind of await as a capability of the run: it marks the calls of each reply that wait —
 * for a person's approval or answer, for a wait's time or event, for the child run a call queues
 * (recorded with the reply at checkpoint A) — and carries out `awaitDecision`: find what ends the
 * awaited call's wait (a person's decision; a wait's signal or its time; a child's end) and record
 * it as the DECISION. The inbox entry it came from is settled only once the record is durable.
 */
import type { AnnouncedEffect } from '../../machines/agent-loop.effects.ts';
import type { PendingCall } from '../../machines/agent-loop.types.ts';
import type { Capability, RunSession } from '../core/session.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';
import { questionOf } from './ask-user.ts';
import { awaitedCallOf, type DecisionOptions, findDecision } from './decision-step.ts';
import { type DecisionPolicy, needsDecisionOf } from './needs-decision.ts';
import { findWake } from './wait-step.ts';
import { findChildEnd } from './child-step.ts';

export function awaitCapability(registry: ToolRegistry, policy: DecisionPolicy, options: DecisionOptions): Capability {
  return {
    name: 'awaits',
    decisionNeeds: (reply) => needsDecisionOf(reply, registry, policy),
    effects: { awaitDecision: (session) => takeDecision(session, options) },
  };
}

/** Null: no decision, and the run is not to wait (or a cancel or pause came first: back to the boundary). */
async function takeDecision(session: RunSession, options: DecisionOptions): Promise<AnnouncedEffect | null> {
  const context = session.context();
  const call = awaitedCallOf(context);
  const question = call.needs === 'answer' ? questionOf(call.input) : null;
  const onWait = () => {
    // A file in the way of the call's decision is said while the run waits, not left to be found.
    const unreadable = session.store.decisions?.unreadable?.(call.id) ?? null;
    session.emit({ type: 'waiting', call: session.callView(call), needs: call.needs!, since: context.awaiting!.since, question, ...(unreadable ? { unreadable } : {}) });
  };
  const wait = { runId: session.runId, context, inbox: session.store.decisions, registry: session.registry, options, onWait };
  // A wait is decided by its signal or the clock (wait-step.ts), a child await by its child's end
  // (child-step.ts), a call for a person by that person.
  const signals = session.store.signals;
  const find =
    call.needs === 'wait'
      ? (signal: AbortSignal) => findWake({ ...wait, signals, signal })
      : call.needs === 'child'
        ? (signal: AbortSignal) => findChildEnd({ ...wait, signals, signal, contextOf: (open) => session.callContext(open), onQueue: queueEvents(session) })
        : (signal: AbortSignal) => findDecision({ ...wait, signal });
  const decision = await session.control.watch(find, session.signal);
  if (!decision) {
    session.stopIfAsked();
    return session.control.requested ? 'awaitDecision' : null;
  }
  const effect = await session.step({ type: 'DECISION', decision });
  await session.store.decisions?.settle(decision.tool_use_id);
  session.emit({ type: 'decided', call: session.callView(call), decision });
  return effect;
}

/** The events around a child's queueing, as the run's observers see them. */
function queueEvents(session: RunSession) {
  return {
    before: (call: PendingCall) => session.emit({ type: 'child-queueing', call: session.callView(call), at: Date.now() }),
    after: (call: PendingCall, childRunId: string) => session.emit({ type: 'child-queued', call: session.callView(call), childRunId, at: Date.now() }),
  };
}
