/**
 * The agent loop machine read as a graph: its states (with the role each plays in durability)
 * and its transitions, in the order the machine defines them. Pure: it reads the machine
 * definition through @xstate/graph and never runs it. The diagram and the Stately source are
 * both drawn from this one reading, so they cannot disagree about what the machine is.
 */
import { type DirectedGraphNode, toDirectedGraph } from '@xstate/graph';
import type { AnyStateMachine } from 'xstate';
import { type AgentStateName, isStoppedAtLimit } from '../machines/agent-loop.types.ts';

/** What a state means for durability; shown as a badge on the diagram. */
export type StateRole = 'model-call' | 'checkpoint-a' | 'ledger' | 'decision' | 'checkpoint-b' | 'final' | 'stopped' | 'compaction';

/** Checked against the machine by the tests: a state added to the machine must get a role here. */
export const STATE_ROLES: Record<AgentStateName, StateRole> = {
  awaitingModel: 'model-call',
  pendingTool: 'checkpoint-a',
  effectRecorded: 'ledger',
  awaitingDecision: 'decision',
  closed: 'checkpoint-b',
  done: 'final',
  stoppedAtMaxTurns: 'stopped',
  failed: 'final',
  cancelled: 'final',
  stoppedAtBudget: 'stopped',
  compacting: 'compaction',
};

export const ROLE_BADGES: Record<StateRole, string> = {
  'model-call': 'asks the model',
  'checkpoint-a': 'checkpoint A',
  ledger: 'ledger entry',
  decision: 'waits for a person',
  'checkpoint-b': 'checkpoint B',
  final: 'final',
  stopped: 'stopped: more resumes it',
  compaction: 'summary',
};

export interface GraphTransition {
  event: string;
  target: string;
  /** The guard as a name; a higher-order guard reads `a && b`, `a || b` or `!a`. */
  guard: string | null;
  /** The same guard as a tree of named guards (what the Stately source prints as `and([...])`). */
  guardTree: GuardTree | null;
  /** Unguarded, but tried after guarded transitions on the same event: taken when none of them is. */
  otherwise: boolean;
  actions: string[];
  reenter: boolean;
  /**
   * No target: taken in place, the state neither left nor re-entered (a reply's tokens counted).
   * `target` then names the state itself, where the diagram draws it.
   */
  targetless: boolean;
  description: string | null;
  /** Declared on the machine's root, not on the state: xstate tries it in every state once the state's own fail. */
  inherited: boolean;
}

/** A guard: a name from setup(), or XState's and/or/not of guards. */
export type GuardTree = string | { op: 'and' | 'or' | 'not'; guards: GuardTree[] };

export interface GraphState {
  name: string;
  role: StateRole | null;
  initial: boolean;
  /** Final for the machine: nothing happens there by itself (but for cancelled, a later process may reopen it: REOPEN). */
  final: boolean;
  /**
   * Final for the machine, yet a run rests there until a resume brings more of the limit it
   * stopped at (stoppedAtMaxTurns, stoppedAtBudget) and leaves it: drawn as a resting state, not an end.
   */
  resting: boolean;
  description: string | null;
  entry: string[];
  /** In the machine's order (the order guards are tried in). */
  transitions: GraphTransition[];
}

export interface MachineGraph {
  id: string;
  /**
   * The root's own transitions (CANCEL, REOPEN of a live run). Each is also in the transitions of
   * every state that is not final, as `inherited` (a targetless one with that state as its
   * target): the machine's guard refuses it in a final state, so that is where it can be taken,
   * and where the diagram draws it.
   */
  transitions: GraphTransition[];
  states: GraphState[];
}

/** One arrow on the diagram: every transition between the same two states, drawn once. */
export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  transitions: GraphTransition[];
}

export function machineGraphOf(machine: AnyStateMachine): MachineGraph {
  const root = toDirectedGraph(machine);
  const initial = machine.root.config.initial;
  const rootTransitions = transitionsOf(root, false);
  const states = root.children.map((node): GraphState => {
    const stateNode = node.stateNode;
    if (node.children.length > 0) {
      throw new Error(`state ${stateNode.key} has child states; the visualizer draws flat machines only`);
    }
    const final = stateNode.type === 'final';
    const inherited = final ? [] : transitionsOf(root, true).map((t) => (t.targetless ? { ...t, target: stateNode.key } : t));
    return {
      name: stateNode.key,
      role: (STATE_ROLES as Record<string, StateRole>)[stateNode.key] ?? null,
      initial: stateNode.key === initial,
      final,
      resting: final && isStoppedAtLimit(stateNode.key as AgentStateName),
      description: stateNode.description ?? null,
      entry: stateNode.entry.map(actionName),
      transitions: [...transitionsOf(node, false), ...inherited],
    };
  });
  return { id: machine.id, transitions: rootTransitions, states };
}

/** A node's own transitions, in the machine's order (the order guards are tried in). */
function transitionsOf(node: DirectedGraphNode, inherited: boolean): GraphTransition[] {
  return node.edges.map((edge, index) => {
    const guardTree = edge.transition.guard === undefined ? null : guardTreeOf(edge.transition.guard);
    const guard = guardTree === null ? null : guardText(guardTree);
    const guardedBefore = node.edges.slice(0, index).some((other) => other.label.text === edge.label.text && other.transition.guard !== undefined);
    return {
      event: edge.label.text,
      target: edge.target.key,
      guard,
      guardTree,
      otherwise: guard === null && guardedBefore,
      actions: edge.transition.actions.map(actionName),
      reenter: edge.transition.reenter === true,
      targetless: edge.transition.target === undefined,
      description: edge.transition.description ?? null,
      inherited,
    };
  });
}

/**
 * The arrows to draw: transitions grouped by source and target, in the machine's order. A
 * targetless transition is drawn on the state's loop with the others, though a run that takes it
 * takes no arrow (run-timeline.ts): it stays where it is.
 */
export function edgesOf(graph: MachineGraph): GraphEdge[] {
  const edges = new Map<string, GraphEdge>();
  for (const state of graph.states) {
    for (const transition of state.transitions) {
      const id = edgeId(state.name, transition.target);
      const edge = edges.get(id) ?? { id, source: state.name, target: transition.target, transitions: [] };
      edge.transitions.push(transition);
      edges.set(id, edge);
    }
  }
  return [...edges.values()];
}

export function edgeId(source: string, target: string): string {
  return `${source}->${target}`;
}

/**
 * An arrow's label as short lines: each event, then each of its guards in the order they are
 * tried (a long `a && b` split after its first part). Short lines keep the diagram narrow
 * enough to stay readable when scaled to fit a panel.
 */
export function edgeLabelLines(edge: GraphEdge): string[] {
  const lines: string[] = [];
  const events = [...new Set(edge.transitions.map((t) => t.event))];
  for (const event of events) {
    lines.push(event);
    const guards = edge.transitions.filter((t) => t.event === event).map((t) => t.guard ?? (t.otherwise ? 'otherwise' : null));
    if (!guards.some((guard) => guard !== null)) continue;
    for (const guard of guards) lines.push(...wrapGuard(`[${guard ?? 'always'}]`));
  }
  return lines;
}

const GUARD_LINE = 20;

function wrapGuard(text: string): string[] {
  if (text.length <= GUARD_LINE) return [text];
  const parts = text.split(/ (?=&& |\|\| )/);
  return parts.map((part, i) => (i === 0 ? part : ` ${part}`));
}

function actionName(action: unknown): string {
  if (typeof action === 'string') return action;
  if (action && typeof action === 'object' && typeof (action as { type?: unknown }).type === 'string') return (action as { type: string }).type;
  if (typeof action === 'function' && action.name) return action.name;
  throw new Error('the machine has an inline (unnamed) action; name it in setup() so it can be drawn and exported');
}

interface HigherOrderGuard {
  (...args: never[]): unknown;
  guards: unknown[];
}

/** A machine's guard (a name or and/or/not of guards) as a tree of names. */
export function guardTreeOf(guard: unknown): GuardTree {
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function' && Array.isArray((guard as HigherOrderGuard).guards)) {
    const op = guard.name;
    if (op === 'and' || op === 'or' || op === 'not') return { op, guards: (guard as HigherOrderGuard).guards.map(guardTreeOf) };
  }
  if (guard && typeof guard === 'object' && typeof (guard as { type?: unknown }).type === 'string') return (guard as { type: string }).type;
  throw new Error('the machine has an inline (unnamed) guard; name it in setup() so it can be drawn and exported');
}

/** `a && b`, `a || b`, `!a`; compound parts keep their parentheses: !(a && b) is not !a && b. */
export function guardText(tree: GuardTree): string {
  if (typeof tree === 'string') return tree;
  const parts = tree.guards.map(guardText).map((part) => (part.includes(' ') ? `(${part})` : part));
  return tree.op === 'not' ? `!${parts[0]}` : parts.join(tree.op === 'and' ? ' && ' : ' || ');
}
