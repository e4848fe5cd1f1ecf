/**
 * Drives one run: compute the next snapshot with the pure `transition()`, make it durable, and
 * only then carry out the effect it announced, feeding the outcome back as the next event. The
 * loop knows the effects, not the capabilities: the model call, the tool turn and the turn's
 * close are the runtime's own; a decision and a compaction are carried out by the capability
 * that registered for them, and each capability may take a step of its own before a model call
 * (a budget reached, a compaction due). A cancel or pause is looked for at every step boundary.
 */
import { type AnnouncedEffect, announcedEffectOf } from '../../machines/agent-loop.effects.ts';
import { type AgentEvent, type AgentStateName, FINAL_STATES } from '../../machines/agent-loop.types.ts';
import type { RunResult } from '../core/run-events.ts';
import type { CapabilityEffect, EffectHandler } from '../core/session.ts';
import type { DurableView } from '../store/journal/journal-codec.ts';
import type { JournalRecord } from '../store/journal/journal-record.ts';
import type { AppendReceipt } from '../store/store.ts';
import type { AgentSnapshot } from './journal-writer.ts';
import { ModelCall } from './model-call.ts';
import { runResultOf } from './run-result.ts';
import { type DriverParts, DriverSession, type JournalEnds } from './run-session.ts';
import { reconcileOpenTurn } from './reconcile-turn.ts';
import { takeUp, type TakeUp } from './take-up.ts';
import { runToolTurn } from './tool-turn.ts';

export type { AgentSnapshot } from './journal-writer.ts';
export type { DriverParts, JournalEnds } from './run-session.ts';

/** The states of a turn whose calls a process that died may have left open. */
const OPEN_TURN: readonly AgentStateName[] = ['pendingTool', 'effectRecorded'];

export class RunDriver {
  private readonly session: DriverSession;
  private readonly modelCall: ModelCall;
  private readonly handlers: Partial<Record<CapabilityEffect, EffectHandler>> = {};

  constructor(parts: DriverParts, readonly runId: string, snapshot: AgentSnapshot, durable: DurableView, journal: JournalEnds) {
    this.session = new DriverSession(parts, runId, snapshot, durable, journal);
    this.modelCall = new ModelCall(this.session);
    for (const capability of parts.capabilities) {
      for (const [effect, handler] of Object.entries(capability.effects ?? {}) as [CapabilityEffect, EffectHandler][]) {
        if (this.handlers[effect]) throw new Error(`two capabilities carry out ${effect}`);
        this.handlers[effect] = handler;
      }
    }
  }

  get state(): AgentStateName {
    return this.session.state();
  }

  /** Reports the record that created the run (it was written by the store's create()). */
  async announceCreated(record: JournalRecord, receipt: AppendReceipt): Promise<void> {
    await this.session.writer.report(record, receipt);
    const { task, system, maxTurns, maxPausesInARow } = this.session.context();
    this.session.inspection.started({ task, system, maxTurns, maxPausesInARow });
  }

  /** Runs effects until the machine rests in a final state (or waits for a decision it may not wait for). */
  async drive(first: AnnouncedEffect | null): Promise<RunResult> {
    const { session } = this;
    let effect = first;
    while (effect) {
      session.stopIfAsked();
      const looking = session.control.atBoundary();
      const cancel = looking && (await looking);
      effect = cancel ? await session.step(cancel) : await this.carryOut(effect);
    }
    if (!FINAL_STATES.includes(this.state) && this.state !== 'awaitingDecision') {
      throw new Error(`the machine rests in ${this.state} without announcing an effect`);
    }
    return this.finish();
  }

  /**
   * Picks a loaded run up where it stopped (take-up.ts: say so, reopen), settles the calls of a
   * turn it finds open (reconcile-turn.ts) and goes on. With `message` (checked by
   * checkContinue), a done run takes it as the user's next message.
   */
  async resume(takingUp: TakeUp): Promise<RunResult> {
    await takeUp(this.session.takeUpParts(), takingUp);
    if (OPEN_TURN.includes(this.state)) await reconcileOpenTurn(this.session.reconcileParts(), takingUp.origin.changedTools);
    return this.drive(announcedEffect(this.session.writer.snapshot));
  }

  result(): RunResult {
    return runResultOf(this.runId, this.state, this.session.context());
  }

  private carryOut(effect: AnnouncedEffect): Promise<AnnouncedEffect | null> {
    const { session } = this;
    switch (effect) {
      case 'requestModelReply':
        return this.beforeModelCall() ?? this.modelCall.ask();
      case 'runPendingTools':
        return runToolTurn(session);
      case 'requestTurnClose':
        return session.step({ type: 'CLOSE_TURN' });
      case 'awaitDecision':
      case 'requestCompaction': {
        const handler = this.handlers[effect];
        if (!handler) throw new Error(`the machine announced ${effect}, and no capability of this run carries it out`);
        return handler(session);
      }
    }
  }

  /** The first step a capability takes instead of the model call, if any. */
  private beforeModelCall(): Promise<AnnouncedEffect | null> | null {
    const capabilities = this.session.capabilities;
    for (let index = 0; index < capabilities.length; index++) {
      const event = capabilities[index]!.beforeModelCall?.(this.session);
      if (event instanceof Promise) return this.askedLater(event, index + 1);
      if (event) return this.session.step(event);
    }
    return null;
  }

  /** The rest of beforeModelCall once a capability's answer arrives: its step, the next ones' or the model call. */
  private async askedLater(answer: Promise<AgentEvent | null>, next: number): Promise<AnnouncedEffect | null> {
    const event = await answer;
    if (event) return this.session.step(event);
    const capabilities = this.session.capabilities;
    for (let index = next; index < capabilities.length; index++) {
      const later = await capabilities[index]!.beforeModelCall?.(this.session);
      if (later) return this.session.step(later);
    }
    return this.modelCall.ask();
  }

  private finish(): RunResult {
    const result = this.result();
    this.session.emit({ type: 'finished', result });
    return result;
  }
}

function announcedEffect(snapshot: AgentSnapshot): AnnouncedEffect | null {
  return announcedEffectOf(snapshot.value as AgentStateName, snapshot.context);
}
