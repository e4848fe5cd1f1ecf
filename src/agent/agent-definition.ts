/**
 * An agent as a user defines it once: its model, instructions, tools and policies, usable the
 * same way by startRun on one machine and by a fleet's workers. Its version is a hash of what
 * changes its behaviour, pinned in a run's header when the run starts, so that a run is only
 * ever driven by the agent it started with (or a version that agent declares compatible).
 */
import type { Model } from '../model/model.ts';
import { serverToolsProblem } from '../model/server-tools.ts';
import type { AgentSpec } from './agent-spec.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';
import { agentVersionOf } from './agent-version.ts';

export type { AgentSpec } from './agent-spec.ts';

/** An agent's name: 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit. */
const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface AgentDefinition extends Readonly<AgentSpec> {
  readonly kind: 'durable-agent/agent';
  /** A hash of what changes behaviour: the model's name, the system prompt, the tools (names, descriptions, schemas, traits) and the policies. */
  readonly version: string;
}

export class AgentDefinitionError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'AgentDefinitionError';
  constructor(
    readonly agent: string,
    readonly problem: string,
  ) {
    super(`The agent ${JSON.stringify(agent)} cannot be defined: ${problem}. Nothing was run; fix the definition.`);
  }
}

/** Checks a definition and gives it its version. */
export function defineAgent(spec: AgentSpec): AgentDefinition {
  const name = typeof spec?.name === 'string' ? spec.name : String(spec?.name);
  if (!AGENT_NAME.test(name)) throw new AgentDefinitionError(name, 'its name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit');
  if (typeof spec.model !== 'string' && (typeof spec.model !== 'object' || spec.model === null || typeof spec.model.createMessage !== 'function')) {
    throw new AgentDefinitionError(name, 'model must be a Claude model name or a Model');
  }
  if (typeof spec.model === 'string' && spec.model.trim() === '') throw new AgentDefinitionError(name, 'model is empty');
  if (spec.serverTools !== undefined) {
    if (typeof spec.model !== 'string') throw new AgentDefinitionError(name, 'serverTools go with a model given by name; a Model of your own takes them itself (anthropicModel({ serverTools }))');
    const problem = serverToolsProblem(spec.serverTools);
    if (problem) throw new AgentDefinitionError(name, `${problem.problem} (${problem.advice.replace(/\.$/, '')})`);
  }
  if (!Array.isArray(spec.tools)) throw new AgentDefinitionError(name, 'tools must be an array of tools (defineTool)');
  const seen = new Set<string>();
  for (const tool of spec.tools) {
    if (typeof tool?.name !== 'string' || typeof tool.run !== 'function') throw new AgentDefinitionError(name, 'every tool needs a name and a run() (defineTool makes one)');
    if (seen.has(tool.name)) throw new AgentDefinitionError(name, `two tools are named ${tool.name}`);
    seen.add(tool.name);
  }
  for (const version of spec.compatibleWith ?? []) {
    if (typeof version !== 'string' || version === '') throw new AgentDefinitionError(name, 'compatibleWith lists versions (strings)');
  }
  const definition = { ...spec, name, kind: 'durable-agent/agent' as const, version: agentVersionOf(spec) };
  return Object.freeze(definition);
}

export function isAgentDefinition(value: unknown): value is AgentDefinition {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'durable-agent/agent';
}

/** The versions of its runs this definition may drive: its own, and those it declares compatible. */
export function acceptedVersions(agent: AgentDefinition): string[] {
  return [agent.version, ...(agent.compatibleWith ?? [])];
}

/** The name of the model a definition gives (what the version and the run's header record). */
export function agentModelName(agent: Pick<AgentSpec, 'model'>): string {
  return typeof agent.model === 'string' ? agent.model : agent.model.name;
}

/** The definition's model, made when a run needs it (a name becomes anthropicModel, loaded only then). */
export async function agentModel(agent: AgentDefinition): Promise<Model> {
  if (typeof agent.model !== 'string') return agent.model;
  const { anthropicModel } = await import('../model/anthropic-model.ts');
  return anthropicModel({ model: agent.model, ...(agent.serverTools !== undefined ? { serverTools: agent.serverTools } : {}) });
}

/** What marks a tool that delegates to another agent (a sub-agent tool), with that agent. */
const DELEGATES_TO = Symbol.for('durable-agent.delegates-to');

/** Marks a tool as delegating to `agent`: a fleet worker that drives a run with the tool drives that agent's runs too. */
export function markDelegation<T extends object>(tool: T, agent: AgentDefinition): T {
  Object.defineProperty(tool, DELEGATES_TO, { value: agent, enumerable: true });
  return tool;
}

/** The agents the agent's tools delegate to, and theirs (each once, by name and version). */
export function delegatedAgentsOf(agent: AgentDefinition): AgentDefinition[] {
  const found = new Map<string, AgentDefinition>();
  const walk = (from: AgentDefinition) => {
    for (const tool of from.tools ?? []) {
      const to = (tool as { [DELEGATES_TO]?: AgentDefinition })[DELEGATES_TO];
      if (!to || found.has(`${to.name}@${to.version}`) || to === agent) continue;
      found.set(`${to.name}@${to.version}`, to);
      walk(to);
    }
  };
  walk(agent);
  return [...found.values()];
}
