/**
 * A reply's MODEL_USAGE, taken without xstate's transition(): it comes once per model call, and a
 * targetless transition whose one action assigns the context needs none of the work transition()
 * does (selecting among guards, exiting and entering states) — it costs a turn about as much as
 * the turn's other steps together. Which states take it, and how, is read off the machine: a state
 * whose MODEL_USAGE is anything else (a guard, a target, another action) goes through transition().
 * test/runtime/machine-step.test.ts holds the two equal on every usage step of the crash suite.
 */
import type { SnapshotFrom } from 'xstate';
import { usageCounted } from '../../machines/agent-loop.logic.ts';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import type { AgentEvent } from '../../machines/agent-loop.types.ts';
import { withContext } from './machine-step.ts';

type UsageEvent = Extract<AgentEvent, { type: 'MODEL_USAGE' }>;
type AgentSnapshot = SnapshotFrom<typeof agentLoopMachine>;

/** The states whose MODEL_USAGE is only the machine's countUsage, in place. */
const COUNTED_IN_PLACE: ReadonlySet<string> = new Set(
  Object.values(agentLoopMachine.root.states)
    .filter((node) => {
      const taken = node.on.MODEL_USAGE;
      return taken?.length === 1 && taken[0]!.target === undefined && taken[0]!.guard === undefined && sameActions(taken[0]!.actions, ['countUsage']);
    })
    .map((node) => node.key),
);

function sameActions(actions: readonly unknown[], names: readonly string[]): boolean {
  return actions.length === names.length && actions.every((action, index) => action === names[index]);
}

/** The snapshot after MODEL_USAGE, as the machine's transition makes it, or null where it is not only counted in place. */
export function usageCountedInPlace(snapshot: AgentSnapshot, event: UsageEvent): AgentSnapshot | null {
  if (!COUNTED_IN_PLACE.has(snapshot.value as string)) return null;
  const { context } = snapshot;
  return withContext(snapshot, { ...context, ...usageCounted(context, event) });
}
