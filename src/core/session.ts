/**
 * The one port between the runtime and the capabilities. The runtime drives a run through a
 * session; a capability (approval, compaction, budgets, cancel and pause) plugs in as a handler
 * of an effect the machine announces, or as a hook asked before each model call, and sees the
 * run only through this interface: it reads the context, steps the machine (each step durable
 * before it resolves), counts a reply's tokens, reports events and sees control requests. It
 * never reaches into the driver, and the driver names no capability. What a capability pins in
 * the run's header, and how it holds a resume against it, goes through run-settings.ts.
 */
import type { AnnouncedEffect } from '../../machines/agent-loop.effects.ts';
import type { AgentContext, AgentEvent, AgentStateName, DecisionNeed, ModelReply, PendingCall, TokenUsage } from '../../machines/agent-loop.types.ts';
import type { Model } from '../model/model.ts';
import type { RunStore } from '../store/store.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';
import type { ToolContext } from '../tools/tool.ts';
import type { CallView, RunEvent, RunObserver } from './run-events.ts';

/** Cancel and pause asked of the run from outside, as a session sees them. */
export interface SessionControl {
  /** Whether a cancel or pause waits (a turn's calls not yet started are then left for the step boundary). */
  asked(): Promise<boolean>;
  /** Runs `work` with a signal aborted when a request arrives meanwhile (or when `also` aborts). */
  watch<T>(work: (signal: AbortSignal) => Promise<T>, also?: AbortSignal): Promise<T>;
  /** The signal `watch` gave, or undefined when nothing can ever abort it. */
  abortable(signal: AbortSignal): AbortSignal | undefined;
  /** Set once a request was seen: a wait that ended without an answer goes back to the boundary. */
  readonly requested: unknown;
}

export interface RunSession {
  readonly runId: string;
  readonly store: RunStore;
  readonly model: Model;
  readonly registry: ToolRegistry;
  /** Aborted to stop the run at the next step boundary. */
  readonly signal: AbortSignal | undefined;
  readonly control: SessionControl;
  context(): AgentContext;
  state(): AgentStateName;
  /** Takes the event (it must be taken: throws otherwise), persists the record; the effect it announced, once durable. */
  step(event: AgentEvent): Promise<AnnouncedEffect | null>;
  /** Counts a reply's tokens the moment it arrives (a record of its own: a crash later loses the reply, not its cost). */
  countUsage(usage: TokenUsage, note: string | null, answeredBy?: string): Promise<void>;
  emit(event: RunEvent): void;
  /** The call as events show it (with its tool's traits). */
  callView(call: PendingCall): CallView;
  /** What a tool would be given to run the call (its caller: budget share, trace, the queue for runs it makes), for a capability that acts for a call it does not run. */
  callContext(call: PendingCall): ToolContext;
  /** Throws the stop the signal carries, if it was aborted. */
  stopIfAsked(): void;
}

/** Carries out an effect the machine announced; resolves with the next one (null: the run rests). */
export type EffectHandler = (session: RunSession) => Promise<AnnouncedEffect | null>;

/** The effects a capability may carry out; the runtime keeps the model call, the tool turn and the turn's close. */
export type CapabilityEffect = Extract<AnnouncedEffect, 'awaitDecision' | 'requestCompaction'>;

/**
 * What a capability plugs in. `beforeModelCall` is asked, in the order the capabilities are
 * given, before each model call: an event returned is taken instead of the call (a budget
 * reached, a compaction due). One that must ask elsewhere (a fleet tenant's quota) or wait (its
 * rate limit) returns a promise; the others answer at once, and the call costs them no tick. `observe` wraps the run's observer (to read replies as they come).
 */
export interface Capability {
  readonly name: string;
  beforeModelCall?(session: RunSession): AgentEvent | null | Promise<AgentEvent | null>;
  readonly effects?: Partial<Record<CapabilityEffect, EffectHandler>>;
  /** Which calls of a reply need a person's decision before they run (recorded with the reply at checkpoint A). */
  decisionNeeds?(reply: ModelReply): Promise<Record<string, DecisionNeed> | undefined> | Record<string, DecisionNeed> | undefined;
  observe?(next: RunObserver): RunObserver;
}
