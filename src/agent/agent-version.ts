/**
 * An agent's version: a short hash of what changes how its runs behave, so that a run is never
 * taken up by an agent that would answer it differently than the one it started with. What does
 * not change behaviour is left out (the order of the tools, a tool's code: only what the model
 * sees of it and what the runtime does with its calls). A tool's code is not hashed: a fix in
 * it keeps the version. A change of what a tool does that runs in flight must not meet needs a
 * change the hash sees (its description, its name).
 */
import { createHash } from 'node:crypto';
import type { ToolDefinition } from '../tools/tool.ts';
import type { AgentSpec } from './agent-spec.ts';
import { normalServerTools } from '../model/server-tools.ts';

export function agentVersionOf(spec: AgentSpec): string {
  const described = {
    model: typeof spec.model === 'string' ? spec.model : spec.model.name,
    system: spec.system ?? null,
    tools: [...spec.tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map(toolShape),
    maxTurns: spec.maxTurns ?? null,
    maxTokens: spec.maxTokens ?? null,
    requireApproval: spec.requireApproval ?? null,
    allowQuestions: spec.allowQuestions ?? false,
    decisionTimeoutMs: spec.decisionTimeoutMs ?? null,
    budget: spec.budget ?? null,
    compaction: spec.compaction ?? null,
    clearToolUses: spec.clearToolUses ?? null,
  };
  // Only where the agent offers server tools, so that every other agent keeps the version it had.
  const serverTools = normalServerTools(spec.serverTools) ?? (typeof spec.model === 'string' ? undefined : spec.model.request?.serverTools);
  if (serverTools) Object.assign(described, { serverTools });
  return createHash('sha256').update(canonicalJson(described)).digest('hex').slice(0, 12);
}

function toolShape(tool: ToolDefinition): unknown {
  return {
    name: tool.name,
    description: tool.description ?? '',
    inputSchema: tool.inputSchema ?? null,
    readOnly: tool.readOnly ?? false,
    idempotent: tool.idempotent ?? false,
    verify: typeof tool.verify === 'function',
    needsApproval: typeof tool.needsApproval === 'function' ? 'function' : (tool.needsApproval ?? false),
    timeoutMs: tool.timeoutMs ?? null,
    annotations: tool.annotations ?? null,
    // Undefined for a tool without them, and so left out: the versions of the agents there are stay as they were.
    readOnlyWhen: typeof tool.readOnlyWhen === 'function' ? 'function' : undefined,
    anthropicDefined: tool.anthropicDefined,
  };
}

/** JSON with every object's keys sorted: the same value gives the same text, whatever the key order. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) return inner;
    return Object.fromEntries(Object.keys(inner as object).sort().map((key) => [key, (inner as Record<string, unknown>)[key]]));
  });
}
