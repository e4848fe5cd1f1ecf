/**
 * xstate's pure `transition()`, without the throwaway actor it builds on every call: that
 * actor computes the machine's initial state each time (about a third of a step's cost). One
 * inert scope per machine is built once and reused; the machine invokes and spawns no actors
 * (a rule of machines/), so nothing is ever registered in it. Same snapshot, same actions:
 * test/runtime/machine-step.test.ts holds it to xstate's own on every path of the crash suite.
 */
import { type AnyActorScope, type AnyMachineSnapshot, type AnyStateMachine, createActor, type EventFromLogic, type ExecutableActionsFrom, type SnapshotFrom } from 'xstate';

const scopes = new WeakMap<AnyStateMachine, AnyActorScope>();

/** Where the transition under way collects its actions (one executor for all: no closure per step). */
let collected: unknown[] | null = null;
const collect = (action: unknown) => void collected?.push(action);

function scopeOf(machine: AnyStateMachine): AnyActorScope {
  let scope = scopes.get(machine);
  if (!scope) {
    const self = createActor(machine);
    scope = {
      self,
      defer: () => {},
      id: '',
      logger: () => {},
      sessionId: '',
      stopChild: () => {},
      system: self.system,
      emit: () => {},
      actionExecutor: collect,
    } as AnyActorScope;
    scopes.set(machine, scope);
  }
  return scope;
}

/** The next snapshot and the actions to carry out, as xstate's `transition(machine, snapshot, event)` returns them. */
export function transition<M extends AnyStateMachine>(machine: M, snapshot: SnapshotFrom<M>, event: EventFromLogic<M>): [SnapshotFrom<M>, ExecutableActionsFrom<M>[]] {
  const actions: ExecutableActionsFrom<M>[] = [];
  const scope = scopeOf(machine);
  const outer = collected;
  collected = actions;
  try {
    return [machine.transition(snapshot, event, scope) as SnapshotFrom<M>, actions];
  } finally {
    collected = outer;
  }
}

/**
 * The snapshot with another context, in the same state: what xstate's own `assign` makes
 * (`cloneMachineSnapshot`), without recomputing the state value, nodes and tags, which a new
 * context does not change (`resolveState` recomputes them: a fifth of the cost of the turn's three transitions).
 */
export function withContext<S extends { context: unknown }>(snapshot: S, context: S['context']): S {
  return { ...snapshot, context };
}

/**
 * The snapshot with the status its state has. xstate keeps `done` once a snapshot reached a
 * final state, even when a transition leaves it again (an actor would have taken no event):
 * the machine's REOPEN does leave one, and the run it takes up is active again.
 */
export function withStatusOfState<S extends AnyMachineSnapshot>(machine: AnyStateMachine, snapshot: S): S {
  if (snapshot.status !== 'done' || machine.root.states[snapshot.value as string]?.type === 'final') return snapshot;
  return machine.resolveState({ value: snapshot.value, context: snapshot.context }) as S;
}
