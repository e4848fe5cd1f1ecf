/**
 * The machine's transitions read off the machine once, as a table: for each state and event
 * type, the candidates in the order xstate tries them (the state's own, then the root's), each
 * with its guard, its target and the actions it runs (its own, then the target's entry). A step then
 * picks the first candidate whose guard passes and applies its assigns, instead of interpreting
 * the state nodes on every event (exit and entry sets, domains, a new snapshot per assign).
 *
 * The machine stays the one definition: nothing here is written by hand, and a machine that uses
 * what the table does not model (nested or parallel states, eventless or delayed transitions,
 * exit actions, invoked actors, history, wildcard events, guards with params, inline actions, an
 * output) gets no table, with the reason; the driver then steps with xstate itself.
 * test/runtime/transition-table.test.ts holds every step equal to xstate's `transition()`.
 */
import { and, type AnyMachineSnapshot, type AnyStateMachine, type EventObject, not, or } from 'xstate';

type Context = Record<string, unknown>;
/** xstate's guard and action definitions, as a state node holds them (unknown shapes). */
type GuardDefinition = unknown;
type ActionDefinition = unknown;

/** An action as a step reports it: the announcements the runtime acts on. */
export interface TableAction {
  type: string;
  params: undefined;
}

type Guard = (snapshot: AnyMachineSnapshot, event: EventObject) => boolean;
type Assign = (context: Context, event: EventObject) => Context;

/** What entering a target makes of the snapshot's state fields. */
interface Target {
  value: unknown;
  _nodes: unknown;
  doneNodes: unknown;
  tags: unknown;
  final: boolean;
}

/** One candidate transition, compiled. */
interface Row {
  guard: Guard | null;
  /** Null when the transition leaves the state as it is (targetless, or to itself without reentering). */
  target: Target | null;
  /** In the order xstate runs them: assigns change the context the next ones read. */
  steps: ReadonlyArray<{ assign: Assign } | { announce: TableAction }>;
  assigns: boolean;
}

/** xstate's own `and`, `or` and `not` guards, known by the check function each kind shares. */
const AND_CHECK = (and([]) as unknown as { check: unknown }).check;
const OR_CHECK = (or([]) as unknown as { check: unknown }).check;
const NOT_CHECK = (not(() => true) as unknown as { check: unknown }).check;

/** Why a machine gets no table (never shown to a user: its runs are stepped by xstate instead). */
export class TableUnfitError extends Error {
  override readonly name = 'TableUnfitError';
}

/** A table of the machine's transitions, or why the machine cannot have one. */
export type TransitionTable = { step: (snapshot: AnyMachineSnapshot, event: EventObject) => [AnyMachineSnapshot, TableAction[]] };

interface StateNodeLike {
  key: string;
  id: string;
  type: string;
  parent?: StateNodeLike;
  states: Record<string, StateNodeLike>;
  on: Record<string, ReadonlyArray<TransitionLike>>;
  entry: readonly ActionDefinition[];
  exit: readonly ActionDefinition[];
  always?: readonly unknown[] | undefined;
  after: readonly unknown[];
  invoke: readonly unknown[];
  history?: unknown;
  output?: unknown;
}

interface TransitionLike {
  guard?: GuardDefinition;
  target?: readonly StateNodeLike[] | undefined;
  reenter: boolean;
  actions: readonly ActionDefinition[];
}

export function compileTransitions(machine: AnyStateMachine): TransitionTable {
  const root = machine.root as unknown as StateNodeLike;
  const implementations = machine.implementations as { guards: Record<string, unknown>; actions: Record<string, unknown> };
  refuseUnmodelled(root);
  const targets = new Map<StateNodeLike, Target>();
  const targetOf = (node: StateNodeLike): Target => {
    let target = targets.get(node);
    if (!target) {
      const resting = machine.resolveState({ value: node.key, context: {} }) as unknown as Target;
      const final = node.type === 'final';
      // The order xstate leaves them in: the entered state after the root, or before it in a snapshot
      // whose status is done (xstate sorts them for the exit of a finished machine).
      target = { value: resting.value, _nodes: [root, node], doneNodes: [node, root], tags: resting.tags, final };
      targets.set(node, target);
    }
    return target;
  };
  /** `holder` is where the transition is defined: a state, or the root (whose targets exit the state and enter theirs). */
  const compileRow = (holder: StateNodeLike, transition: TransitionLike): Row => {
    const [to, ...more] = transition.target ?? [];
    if (more.length) throw new TableUnfitError('a transition has several targets');
    // Where xstate exits and enters nothing: no target, or the state that defines it, not reentered.
    const stays = to === undefined || (to === holder && !transition.reenter);
    if (to !== undefined && to.parent !== root) throw new TableUnfitError(`${to.id} is not a child of the root`);
    const definitions = stays ? transition.actions : [...transition.actions, ...to.entry];
    const steps = definitions.map((definition) => compileAction(definition, implementations.actions));
    return {
      guard: transition.guard === undefined ? null : compileGuard(transition.guard, implementations.guards),
      target: stays ? null : targetOf(to),
      steps,
      assigns: steps.some((step) => 'assign' in step),
    };
  };
  const table = new Map<string, Map<string, readonly Row[]>>();
  for (const state of Object.values(root.states)) {
    const byEvent = new Map<string, Row[]>();
    for (const holder of [state, root]) {
      for (const [eventType, transitions] of Object.entries(holder.on)) {
        const rows = byEvent.get(eventType) ?? [];
        // The state's own candidates first; the root's are tried only when none of them is taken.
        for (const transition of transitions) rows.push(compileRow(holder, transition));
        byEvent.set(eventType, rows);
      }
    }
    table.set(state.key, byEvent);
  }
  return {
    step(snapshot, event) {
      const rows = table.get(snapshot.value as string)?.get(event.type);
      if (rows) for (const row of rows) if (row.guard === null || row.guard(snapshot, event)) return taken(snapshot, event, row);
      return [snapshot, []];
    },
  };
}

/** The snapshot after a row, as xstate's microstep makes it (same fields; a final target makes it done). */
function taken(snapshot: AnyMachineSnapshot, event: EventObject, row: Row): [AnyMachineSnapshot, TableAction[]] {
  const actions: TableAction[] = [];
  let context = snapshot.context as Context;
  for (const step of row.steps) {
    if ('assign' in step) context = step.assign(context, event);
    else actions.push(step.announce);
  }
  const { target } = row;
  if (target === null) return [row.assigns ? snapshotWith(snapshot, snapshot.status, snapshot.output, context, snapshot.value, snapshot._nodes, snapshot.tags) : snapshot, actions];
  const status = target.final ? 'done' : snapshot.status;
  const output = target.final ? undefined : snapshot.output;
  // Reentering the state it is in: xstate keeps the snapshot's nodes (and the snapshot itself, if nothing was assigned).
  if (target.value === snapshot.value) {
    if (!row.assigns && !target.final) return [snapshot, actions];
    return [snapshotWith(snapshot, status, output, row.assigns ? context : snapshot.context, snapshot.value, snapshot._nodes, snapshot.tags), actions];
  }
  // A snapshot stays done once it was (xstate's status is only ever set, never taken back: withStatusOfState).
  const nodes = status === 'done' ? target.doneNodes : target._nodes;
  return [snapshotWith(snapshot, status, output, context, target.value, nodes, target.tags), actions];
}

/**
 * A snapshot with xstate's fields in xstate's order (its createMachineSnapshot), written out:
 * one shape for every snapshot made here, where a spread of snapshots of several shapes (xstate's
 * and these) costs V8 a slow copy each time.
 */
function snapshotWith(from: AnyMachineSnapshot, status: unknown, output: unknown, context: Context, value: unknown, nodes: unknown, tags: unknown): AnyMachineSnapshot {
  return {
    status,
    output,
    error: from.error,
    machine: from.machine,
    context,
    _nodes: nodes,
    value,
    tags,
    children: from.children,
    historyValue: from.historyValue,
    matches: from.matches,
    hasTag: from.hasTag,
    can: from.can,
    getMeta: from.getMeta,
    toJSON: from.toJSON,
  } as unknown as AnyMachineSnapshot;
}

function refuseUnmodelled(root: StateNodeLike): void {
  if (root.output !== undefined) throw new TableUnfitError('the machine has an output');
  for (const node of [root, ...Object.values(root.states)]) {
    if (node !== root && node.type !== 'atomic' && node.type !== 'final') throw new TableUnfitError(`${node.id} is ${node.type}: only a root with atomic and final states is modelled`);
    if (node.always?.length) throw new TableUnfitError(`${node.id} has eventless transitions`);
    if (node.after.length) throw new TableUnfitError(`${node.id} has delayed transitions`);
    if (node.invoke.length) throw new TableUnfitError(`${node.id} invokes an actor`);
    if (node.exit.length) throw new TableUnfitError(`${node.id} has exit actions`);
    if (node.history) throw new TableUnfitError(`${node.id} is a history state`);
    for (const eventType of Object.keys(node.on)) {
      if (eventType === '*' || eventType.endsWith('.*')) throw new TableUnfitError(`${node.id} takes a wildcard event (${eventType})`);
    }
  }
  if (root.entry.length) throw new TableUnfitError('the root has entry actions');
}

function compileGuard(definition: GuardDefinition, guards: Record<string, unknown>): Guard {
  if (typeof definition === 'string') {
    const implementation = guards[definition];
    if (implementation === undefined) throw new TableUnfitError(`guard ${definition} is not implemented`);
    return compileGuard(implementation, guards);
  }
  if (typeof definition !== 'function') throw new TableUnfitError('a guard with params is not modelled');
  const builtin = definition as { check?: unknown; guards?: readonly GuardDefinition[] };
  if (builtin.check === undefined) {
    const predicate = definition as (args: { context: unknown; event: EventObject }, params: undefined) => boolean;
    return (snapshot, event) => predicate({ context: snapshot.context, event }, undefined);
  }
  const inner = builtin.guards?.map((guard) => compileGuard(guard, guards));
  if (builtin.check === AND_CHECK && inner) return (snapshot, event) => inner.every((guard) => guard(snapshot, event));
  if (builtin.check === OR_CHECK && inner) return (snapshot, event) => inner.some((guard) => guard(snapshot, event));
  if (builtin.check === NOT_CHECK && inner?.length === 1) {
    const [negated] = inner as [Guard];
    return (snapshot, event) => !negated(snapshot, event);
  }
  // Any other built-in (stateIn): its own check, with the snapshot it reads.
  const check = builtin.check as (snapshot: AnyMachineSnapshot, args: { context: unknown; event: EventObject }, guard: unknown) => boolean;
  return (snapshot, event) => check(snapshot, { context: snapshot.context, event }, definition);
}

function compileAction(definition: ActionDefinition, actions: Record<string, unknown>): { assign: Assign } | { announce: TableAction } {
  if (typeof definition !== 'string') throw new TableUnfitError('only named actions are modelled');
  const implementation = actions[definition] as { type?: string; assignment?: unknown } | undefined;
  if (implementation === undefined) throw new TableUnfitError(`action ${definition} is not implemented`);
  if (implementation.type !== 'xstate.assign') {
    if (typeof implementation !== 'function' || 'resolve' in implementation) throw new TableUnfitError(`action ${definition} is a built-in action other than assign`);
    // Named actions with no built-in behaviour only announce: xstate reports them by name.
    return { announce: { type: definition, params: undefined } };
  }
  const { assignment } = implementation;
  if (typeof assignment === 'function') {
    const update = assignment as (args: { context: Context; event: EventObject }, params: undefined) => Context;
    // A spread, not xstate's Object.assign({}, …): the same keys in the same order, in a quarter of the time.
    return { assign: (context, event) => ({ ...context, ...update({ context, event }, undefined) }) };
  }
  const fields = Object.entries(assignment as Record<string, unknown>);
  return {
    assign: (context, event) => {
      // Each field's assigner reads the context as it was before this assign, as xstate's do.
      const update: Context = {};
      for (const [key, field] of fields) update[key] = typeof field === 'function' ? (field as (args: { context: Context; event: EventObject }, params: undefined) => unknown)({ context, event }, undefined) : field;
      return { ...context, ...update };
    },
  };
}
