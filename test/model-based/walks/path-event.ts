/**
 * What a walk is made of: the machine's snapshots, and its events with what a scenario needs to
 * make the real runtime produce them. Each capability's walk (this folder) offers its own.
 */
import type { SnapshotFrom } from 'xstate';
import type { agentLoopMachine } from '../../../machines/agent-loop.machine.ts';
import type { AgentEvent, BudgetChange, Cancellation, Decision, DecisionNeed, Message, ModelReply, PendingCall } from '../../../machines/agent-loop.types.ts';
import { endTurnReply } from '../../../src/model/scripted-model.ts';

export type Snapshot = SnapshotFrom<typeof agentLoopMachine>;
export type WalkContext = Snapshot['context'];

/** A machine event plus what the scenario needs to make the runtime produce it. */
export type PathEvent =
  /** `sent` is what the model sends when it is not the reply the machine gets (the runtime normalizes it first). */
  /** `held`: the reply held at MAX_TURNS, acted on once the run has more turns (no model call). */
  | { type: 'MODEL_REPLY'; reply: ModelReply; sent?: unknown; label: string; needsDecision?: Record<string, DecisionNeed>; held?: boolean }
  | { type: 'MODEL_REPLY_INVALID'; reason: string; usage: ModelReply['usage']; reply: ModelReply; label: string }
  | { type: 'TOOL_RESULT'; outcome: Extract<AgentEvent, { type: 'TOOL_RESULT' }>['outcome']; behaviour: ToolBehaviour; label: string }
  | { type: 'CLOSE_TURN'; label: string }
  | { type: 'DECISION_NEEDED'; tool_use_id: string; at: number; label: string }
  /** The run's onDecision handler gives `decision` (its by and at are the runtime's). */
  | { type: 'DECISION'; decision: Decision; label: string }
  /** A cancel asked from outside as the run reached the step before (see Scenario.cancelAt). */
  | { type: 'CANCEL'; cancellation: Cancellation; label: string }
  /** The run's budget is reached before a model call: the runtime stops instead of asking. */
  | { type: 'BUDGET_REACHED'; label: string }
  /** Client compaction: the runtime measures the context over its trigger (a reply holds LONG_TEXT). */
  | { type: 'COMPACT'; estimatedTokens: number; limit: number; keepFrom: number; label: string }
  | { type: 'COMPACTED'; summary: Message; replaced: number; label: string }
  /** A reply's tokens, counted as it arrives: the step before each model call's reply (see {@link usageStepBefore}). */
  | { type: 'MODEL_USAGE'; usage: ModelReply['usage']; label: string }
  /**
   * A process takes the run up with settings of its own: after the run stopped by itself (a final
   * state), or after the process before it was killed right after the step before (a live state).
   */
  | { type: 'REOPEN'; maxTurns: number; budget?: BudgetChange; message?: string; label: string };

/**
 * ok: returns; throws: throws; ledger-write-fails: returns, and its ledger write fails with
 * ENOSPC; unserializable: returns a value JSON cannot hold (a BigInt, a circular object).
 */
export type ToolBehaviour = 'ok' | 'throws' | 'ledger-write-fails' | 'unserializable';

export const FINISH_TEXT = 'finished';

/** The reply that ends the run: where one ending is enough, it is the only event offered. */
export function endTurnEvent(): PathEvent {
  return { type: 'MODEL_REPLY', label: 'reply: end_turn', reply: endTurnReply(FINISH_TEXT) };
}

/** The call's outcome when it behaves so: a TOOL_RESULT the runtime produces by running it. */
export function toolResultEvent(call: Pick<PendingCall, 'id' | 'name'>, behaviour: ToolBehaviour, label = `${call.name} ${behaviour === 'ok' ? 'ran' : behaviour}`): PathEvent {
  return {
    type: 'TOOL_RESULT',
    label,
    behaviour,
    outcome: { tool_use_id: call.id, name: call.name, kind: behaviour === 'throws' ? 'threw' : 'ran', content: behaviour, is_error: behaviour === 'throws' || behaviour === 'unserializable' },
  };
}

export function isReply(event: PathEvent): event is Extract<PathEvent, { type: 'MODEL_REPLY' | 'MODEL_REPLY_INVALID' }> {
  return event.type === 'MODEL_REPLY' || event.type === 'MODEL_REPLY_INVALID';
}

/**
 * The pause limit of a walk unless it names one: one pause_turn is continued, a second in a row
 * fails the run. A walk with limit 0 fails on the first pause, which is the only way the limit
 * is met in `closed` (a tool turn sets the count of pauses back to 0).
 */
export const PAUSE_LIMIT = 1;
