/**
 * The machine as source that Stately Studio imports and XState runs as it is: one
 * `setup({...}).createMachine({...})` with the states, transitions, descriptions, guards (combined
 * ones as `and([...])`) and actions by name. The real guards and actions read the model's reply
 * and the run's context and stay in the repository; the printed file has stubs in their place,
 * written in its header. Drawn from the same reading of the machine as the diagram, so the two
 * always agree.
 */
import type { GraphState, GraphTransition, GuardTree, MachineGraph } from './machine-graph.ts';

/** Printed as is: a piece of code among the configuration's values. */
class Code {
  constructor(readonly code: string) {}
}

type Source = string | boolean | Code | Source[] | { [key: string]: Source };

export function statelySource(graph: MachineGraph, origin: string): string {
  const initial = graph.states.find((state) => state.initial);
  const config: Record<string, Source> = { id: graph.id };
  if (initial) config.initial = initial.name;
  // The root's own transitions once, on the root, as the machine declares them (the states list them as inherited).
  if (graph.transitions.length > 0) config.on = onConfig(graph.transitions, '.');
  config.states = Object.fromEntries(graph.states.map((state) => [state.name, stateConfig(state)]));
  const { guards, actions } = namesOf(graph);
  const implementations: Record<string, Source> = {
    guards: Object.fromEntries(guards.map((name) => [name, new Code(`({ event }) => event.guards?.${propertyAccess(name)} === true`)])),
    actions: Object.fromEntries(actions.map((name) => [name, new Code('() => {}')])),
  };
  const combinators = [...new Set(allTransitions(graph).flatMap((t) => (t.guardTree ? operatorsOf(t.guardTree) : [])))].sort();
  return [
    `// The durable-agent loop (${origin}), printed by \`durable-agent viz --stately\`.`,
    '// In Stately Studio (stately.ai/registry/new): Code panel, Import, paste this file. XState runs it as',
    '// it is (createActor(agentLoop).start()). The guards and actions below are stubs: the real ones read',
    "// the model's reply and the run's context, and live in the repository. A stub guard answers what",
    '// the event says of it: send { type: \'MODEL_REPLY\', guards: { replyWantsTools: true, turnsRemain: true } }',
    '// to take that transition; a guard the event does not name is false. The stub actions do nothing.',
    `import { ${[...combinators, 'setup'].join(', ')} } from 'xstate';`,
    '',
    `export const ${identifier(graph.id)} = setup(${printSource(implementations, '')}).createMachine(${printSource(config, '')});`,
    '',
  ].join('\n');
}

function namesOf(graph: MachineGraph): { guards: string[]; actions: string[] } {
  const guards = new Set<string>();
  const actions = new Set<string>();
  const leaves = (tree: GuardTree): string[] => (typeof tree === 'string' ? [tree] : tree.guards.flatMap(leaves));
  for (const state of graph.states) for (const action of state.entry) actions.add(action);
  for (const transition of allTransitions(graph)) {
    if (transition.guardTree !== null) for (const name of leaves(transition.guardTree)) guards.add(name);
    for (const action of transition.actions) actions.add(action);
  }
  return { guards: [...guards], actions: [...actions] };
}

/** Every transition as the source declares it: each state's own, then the root's. */
function allTransitions(graph: MachineGraph): GraphTransition[] {
  return [...graph.states.flatMap((state) => state.transitions.filter((t) => !t.inherited)), ...graph.transitions];
}

function stateConfig(state: GraphState): Source {
  const config: Record<string, Source> = {};
  if (state.final) config.type = 'final';
  if (state.description) config.description = state.description;
  if (state.entry.length > 0) config.entry = state.entry;
  const own = state.transitions.filter((t) => !t.inherited);
  if (own.length > 0) config.on = onConfig(own, '');
  return config;
}

/** An `on` block; `targetPrefix` '.' for the root, whose targets are its child states. */
function onConfig(transitions: readonly GraphTransition[], targetPrefix: string): Source {
  const events = [...new Set(transitions.map((t) => t.event))];
  return Object.fromEntries(
    events.map((event) => {
      const configs = transitions.filter((t) => t.event === event).map((t) => transitionConfig(t, targetPrefix));
      return [event, configs.length === 1 ? configs[0]! : configs];
    }),
  );
}

function transitionConfig(transition: GraphTransition, targetPrefix: string): Source {
  // A targetless transition is written without one: a target naming the state itself would be another transition.
  const config: Record<string, Source> = transition.targetless ? {} : { target: `${targetPrefix}${transition.target}` };
  if (transition.guardTree !== null) config.guard = guardSource(transition.guardTree);
  if (transition.actions.length > 0) config.actions = transition.actions;
  if (transition.reenter) config.reenter = true;
  if (transition.description) config.description = transition.description;
  return config;
}

/** A guard as XState writes it: a name, and([...]), or([...]), not(...). */
function guardSource(tree: GuardTree): Source {
  if (typeof tree === 'string') return tree;
  const parts = tree.guards.map((part) => printSource(guardSource(part), ''));
  return new Code(tree.op === 'not' ? `not(${parts[0]})` : `${tree.op}([${parts.join(', ')}])`);
}

function operatorsOf(tree: GuardTree): string[] {
  return typeof tree === 'string' ? [] : [tree.op, ...tree.guards.flatMap(operatorsOf)];
}

function printSource(value: Source, indent: string): string {
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'boolean') return String(value);
  if (isCode(value)) return value.code;
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.every((item) => typeof item === 'string')) return `[${value.map((item) => quote(item as string)).join(', ')}]`;
    return `[\n${value.map((item) => `${inner}${printSource(item, inner)},`).join('\n')}\n${indent}]`;
  }
  const entries = Object.entries(value).map(([key, item]) => `${inner}${propertyName(key)}: ${printSource(item, inner)},`);
  return `{\n${entries.join('\n')}\n${indent}}`;
}

function isCode(value: Source): value is Code {
  return value instanceof Code;
}

function quote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
}

function propertyName(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? key : quote(key);
}

function propertyAccess(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? key : `[${quote(key)}]`;
}

function identifier(id: string): string {
  const cleaned = id.replace(/[^\w$]/g, '_');
  return /^[A-Za-z_$]/.test(cleaned) ? cleaned : `machine_${cleaned}`;
}
