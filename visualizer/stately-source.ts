/**
 * The machine as source Stately Studio imports: one `createMachine({...})` call with the
 * states, transitions, descriptions and the names of the actions and guards (their code stays
 * in the repository; Studio shows names). Drawn from the same reading of the machine as the
 * diagram, so the two always agree.
 */
import type { GraphState, GraphTransition, MachineGraph } from './machine-graph.ts';

type Source = string | boolean | Source[] | { [key: string]: Source };

export function statelySource(graph: MachineGraph, origin: string): string {
  const initial = graph.states.find((state) => state.initial);
  const config: Record<string, Source> = { id: graph.id };
  if (initial) config.initial = initial.name;
  config.states = Object.fromEntries(graph.states.map((state) => [state.name, stateConfig(state)]));
  return [
    `// The durable-agent loop (${origin}), printed by \`durable-agent viz --stately\`.`,
    '// In Stately Studio (stately.ai/registry/new): Code panel, Import, paste this file. Actions and',
    '// guards are named only; a guard written "a && b" is and([a, b]) in the code.',
    "import { createMachine } from 'xstate';",
    '',
    `export const ${identifier(graph.id)} = createMachine(${printSource(config, '')});`,
    '',
  ].join('\n');
}

function stateConfig(state: GraphState): Source {
  const config: Record<string, Source> = {};
  if (state.final) config.type = 'final';
  if (state.description) config.description = state.description;
  if (state.entry.length > 0) config.entry = state.entry;
  const events = [...new Set(state.transitions.map((t) => t.event))];
  if (events.length > 0) {
    config.on = Object.fromEntries(
      events.map((event) => {
        const transitions = state.transitions.filter((t) => t.event === event).map(transitionConfig);
        return [event, transitions.length === 1 ? transitions[0]! : transitions];
      }),
    );
  }
  return config;
}

function transitionConfig(transition: GraphTransition): Source {
  const config: Record<string, Source> = { target: transition.target };
  if (transition.guard) config.guard = transition.guard;
  if (transition.actions.length > 0) config.actions = transition.actions;
  if (transition.reenter) config.reenter = true;
  return config;
}

function printSource(value: Source, indent: string): string {
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'boolean') return String(value);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.every((item) => typeof item === 'string')) return `[${value.map((item) => quote(item as string)).join(', ')}]`;
    return `[\n${value.map((item) => `${inner}${printSource(item, inner)},`).join('\n')}\n${indent}]`;
  }
  const entries = Object.entries(value).map(([key, item]) => `${inner}${propertyName(key)}: ${printSource(item, inner)},`);
  return `{\n${entries.join('\n')}\n${indent}}`;
}

function quote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
}

function propertyName(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? key : quote(key);
}

function identifier(id: string): string {
  const cleaned = id.replace(/[^\w$]/g, '_');
  return /^[A-Za-z_$]/.test(cleaned) ? cleaned : `machine_${cleaned}`;
}
