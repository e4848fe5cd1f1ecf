/**
 * The driver's machine step: the snapshot and the actions xstate's pure `transition()` gives,
 * computed from the machine's transition table (transition-table.ts) — the candidates of each
 * state and event read off the machine once — instead of interpreting the machine on every event.
 * A machine the table does not model is stepped by xstate itself, without the throwaway actor
 * `transition()` builds on every call (it computes the machine's initial state each time).
 * test/runtime/transition-table.test.ts holds the step equal to xstate's own.
 */
import { type AnyActorScope, type AnyMachineSnapshot, type AnyStateMachine, createActor, type EventFromLogic, type EventObject, type SnapshotFrom } from 'xstate';
import { compileTransitions, type TableAction, TableUnfitError, type TransitionTable } from './transition-table.ts';

/** An action a step returns: the runtime reads its name (the effect it announces). */
export type StepAction = { type: string; params?: unknown };

const tables = new WeakMap<AnyStateMachine, TransitionTable | TableUnfitError>();
const scopes = new WeakMap<AnyStateMachine, AnyActorScope>();

/** The machine's table, or why it has none (a machine built with what the table does not model). */
export function tableOf(machine: AnyStateMachine): TransitionTable | TableUnfitError {
  let table = tables.get(machine);
  if (!table) {
    try {
      table = compileTransitions(machine);
    } catch (error) {
      if (!(error instanceof TableUnfitError)) throw error;
      table = error;
    }
    tables.set(machine, table);
  }
  return table;
}

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

/** xstate's own step, through one inert scope per machine (the machine invokes and spawns nothing, so nothing is registered in it). */
function interpreted<M extends AnyStateMachine>(machine: M, snapshot: SnapshotFrom<M>, event: EventFromLogic<M>): [SnapshotFrom<M>, StepAction[]] {
  const actions: StepAction[] = [];
  const outer = collected;
  collected = actions;
  try {
    return [machine.transition(snapshot, event, scopeOf(machine)) as SnapshotFrom<M>, actions];
  } finally {
    collected = outer;
  }
}

/** The next snapshot and the actions to carry out, as xstate's `transition(machine, snapshot, event)` returns them. */
export function transition<M extends AnyStateMachine>(machine: M, snapshot: SnapshotFrom<M>, event: EventFromLogic<M>): [SnapshotFrom<M>, StepAction[]] {
  const table = tableOf(machine);
  if (table instanceof TableUnfitError) return interpreted(machine, snapshot, event);
  return table.step(snapshot as AnyMachineSnapshot, event as EventObject) as [SnapshotFrom<M>, TableAction[]];
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
