/**
 * `--agents FILE` (worker, run, drill, replay): the user's module of agent definitions, loaded by
 * plain node (an ES module, or CommonJS; JavaScript, or TypeScript built to it). Its definitions
 * are its exports made with defineAgent: the default export (one, or an array), and every named
 * export that is one (or an array of them). A module that cannot be loaded, holds none, or two of
 * one name is refused before anything runs (before a worker claims anything).
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { type AgentDefinition, isAgentDefinition } from '../agent/agent-definition.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';
import { UsageError } from './usage-error.ts';

export class AgentsModuleError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'AgentsModuleError';
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(`--agents ${file}: ${problem}. Nothing was run.`);
  }
}

export async function loadAgents(file: string, cwd: string): Promise<AgentDefinition[]> {
  return (await loadAgentsModule(file, cwd)).agents;
}

/** The module's agents, and everything it exports (a drill reads its setup, teardown and count). */
export async function loadAgentsModule(file: string, cwd: string): Promise<{ agents: AgentDefinition[]; exported: Record<string, unknown> }> {
  const absolute = path.resolve(cwd, file);
  if (!fs.existsSync(absolute)) throw new AgentsModuleError(file, `there is no such file (looked for ${absolute})`);
  let exported: Record<string, unknown>;
  try {
    exported = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (error) {
    const why = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    throw new AgentsModuleError(file, `the module could not be loaded (${why.split('\n')[0]}); it must load with plain node (a .ts file must be built to JavaScript first)`);
  }
  const found = new Set<AgentDefinition>();
  for (const value of Object.values(exported)) {
    for (const candidate of Array.isArray(value) ? value : [value]) if (isAgentDefinition(candidate)) found.add(candidate);
  }
  const agents = [...found];
  if (agents.length === 0) {
    throw new AgentsModuleError(file, `it exports no agent definition (exports: ${Object.keys(exported).join(', ') || 'none'}); export what defineAgent({ name, model, tools }) returns`);
  }
  const names = new Map<string, number>();
  for (const agent of agents) names.set(agent.name, (names.get(agent.name) ?? 0) + 1);
  const twice = [...names].filter(([, count]) => count > 1).map(([name]) => name);
  if (twice.length > 0) throw new AgentsModuleError(file, `it exports two agents named ${twice.join(', ')}: give each its own name`);
  return { agents, exported };
}

/** The agent of a module a command is about (run, drill, replay): the one named, or its only one. */
export function pickAgent(agents: AgentDefinition[], file: string, name: string | undefined): AgentDefinition {
  if (name !== undefined) {
    const named = agents.find((agent) => agent.name === name);
    if (!named) throw new AgentsModuleError(file, `it has no agent named ${name} (its agents: ${agents.map((agent) => agent.name).join(', ')})`);
    return named;
  }
  if (agents.length > 1) throw new UsageError(`${file} exports ${agents.length} agents (${agents.map((agent) => agent.name).join(', ')}): say which with --agent NAME.`);
  return agents[0]!;
}
