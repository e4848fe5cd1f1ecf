/**
 * What to do, on resume, with each call of the turn that was open when the process died. Pure:
 * it looks at the ledger and the tools and decides; the runtime carries the decisions out.
 *
 * - ledger hit: the call finished and its outcome is recorded: reuse it, never run it again;
 * - miss, read-only tool: running it again is harmless: run and record;
 * - miss, side-effecting tool that can verify: ask it whether the effect happened;
 * - miss, side-effecting tool that cannot: the state is unknown; tell the model so with an
 *   is_error tool_result rather than guess (running it again could do the effect twice).
 *
 * A call that needs a decision and has none cannot have run (its decision comes first), and
 * calls run in order, so neither it nor any call after it has started: the plan stops there and
 * leaves them open, and the run goes on to wait for the decision. An approved call follows the
 * rules above; a denied or answered one has its outcome in the ledger already.
 */
import { awaitsDecision } from '../../machines/agent-loop.logic.ts';
import type { Decision, PendingCall, ToolOutcome } from '../../machines/agent-loop.types.ts';

export interface ToolTraits {
  readOnly: boolean;
  canVerify: boolean;
}

export type ReconcileDecision =
  | { kind: 'reuse'; call: PendingCall; outcome: ToolOutcome }
  | { kind: 'rerun'; call: PendingCall }
  | { kind: 'verify'; call: PendingCall }
  | { kind: 'report-unknown'; call: PendingCall; why: string };

export function planReconcile(
  pending: readonly PendingCall[],
  ledger: ReadonlyMap<string, ToolOutcome>,
  traitsOf: (toolName: string) => ToolTraits | undefined,
  decisions: readonly Decision[] = [],
): ReconcileDecision[] {
  const firstUndecided = pending.findIndex((call) => !ledger.has(call.id) && awaitsDecision({ decisions }, call));
  const settled = firstUndecided === -1 ? pending : pending.slice(0, firstUndecided);
  return settled.map((call): ReconcileDecision => {
    const recorded = ledger.get(call.id);
    if (recorded) return { kind: 'reuse', call, outcome: recorded };
    const traits = traitsOf(call.name);
    if (!traits) return { kind: 'report-unknown', call, why: `the tool ${call.name} is not available in this process` };
    if (traits.readOnly) return { kind: 'rerun', call };
    if (traits.canVerify) return { kind: 'verify', call };
    return { kind: 'report-unknown', call, why: 'no result was recorded for it' };
  });
}

/** The is_error tool_result for a call whose effect may or may not have happened. */
export function unknownStateMessage(call: PendingCall, why: string): string {
  return (
    `The state of this ${call.name} call (tool_use_id ${call.id}) from before the process was resumed is unknown: ${why}. ` +
    `It was not run again, so as not to repeat its side effect. Check whether it took effect before calling it again.`
  );
}
