/**
 * A stored run replayed against an agent's current code, as a check before a deployment: the
 * model's recorded calls are put to today's definition, and what would now go otherwise is
 * reported — a tool that is gone, an input today's schema refuses, a call today's rule would hold
 * for a person, and, with runTools, a tool whose result is not the recorded one. Nothing is
 * written to the stored run; the tools run (only with runTools) in a scratch folder.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ContentBlock } from '../../machines/agent-loop.types.ts';
import type { AgentDefinition } from '../agent/agent-definition.ts';
import { readRunStatus } from '../runtime/run-status.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import { type RunStore, requireContent } from '../store/store.ts';
import { executeCall } from '../tools/execute-call.ts';
import { ToolRegistry } from '../tools/tool-registry.ts';
import { readOnlyFor, type ToolDefinition } from '../tools/tool.ts';

export interface ReplayOptions {
  agent: AgentDefinition;
  /** The stored run (it is only read). */
  store: RunStore;
  /** Run each recorded call with today's tools and compare its result with the recorded one (default: off). */
  runTools?: boolean | undefined;
  /** Before the tools run (runTools), in the scratch folder they run in. */
  setup?: ((scratch: { dir: string }) => unknown) | undefined;
  teardown?: ((scratch: { dir: string }) => unknown) | undefined;
  scratchRoot?: string | undefined;
}

export type Divergence =
  | { kind: 'tool-gone'; callId: string; tool: string }
  | { kind: 'input-refused'; callId: string; tool: string; problem: string }
  | { kind: 'would-wait-for-a-person'; callId: string; tool: string; why: string }
  | { kind: 'result-differs'; callId: string; tool: string; recorded: string; now: string };

export interface ReplayReport {
  runId: string;
  agent: string;
  version: string;
  /** The version of the agent the run was started with, if it pinned one. */
  pinnedVersion: string | null;
  calls: number;
  divergences: Divergence[];
  /** 0: nothing diverges; 1: something does. */
  exitCode: 0 | 1;
}

interface RecordedCall {
  id: string;
  name: string;
  input: unknown;
}

export async function replayRun(options: ReplayOptions): Promise<ReplayReport> {
  const { agent, store } = options;
  const loaded = requireContent(await store.load());
  const view = foldJournal(store.location, loaded);
  const decided = new Set((await readRunStatus(store)).decided.map((call) => call.tool_use_id));
  const calls = recordedCalls(view.context.messages);
  const registry = new ToolRegistry(agent.tools);
  const divergences: Divergence[] = [];
  for (const call of calls) {
    const tool = registry.get(call.name);
    if (!tool) {
      divergences.push({ kind: 'tool-gone', callId: call.id, tool: call.name });
      continue;
    }
    const checked = await registry.checkInput(call.name, call.input);
    if ('problem' in checked) {
      divergences.push({ kind: 'input-refused', callId: call.id, tool: call.name, problem: checked.problem });
      continue;
    }
    const gate = gatedWhy(agent, tool, checked.input);
    if (gate !== null && !decided.has(call.id)) divergences.push({ kind: 'would-wait-for-a-person', callId: call.id, tool: call.name, why: gate });
  }
  if (options.runTools) divergences.push(...(await rerunTools(options, registry, loaded.header.runId, calls, view.ledger)));
  const order = new Map(calls.map((call, at) => [call.id, at]));
  divergences.sort((a, b) => (order.get(a.callId) ?? 0) - (order.get(b.callId) ?? 0));
  return {
    runId: loaded.header.runId,
    agent: agent.name,
    version: agent.version,
    pinnedVersion: loaded.header.agent?.version ?? null,
    calls: calls.length,
    divergences,
    exitCode: divergences.length > 0 ? 1 : 0,
  };
}

function recordedCalls(messages: readonly { role: string; content: unknown }[]): RecordedCall[] {
  return messages
    .filter((message) => message.role === 'assistant' && Array.isArray(message.content))
    .flatMap((message) => (message.content as ContentBlock[]).filter((block) => block.type === 'tool_use'))
    .map((block) => ({ id: String(block.id), name: String(block.name), input: block.input }));
}

/** Why today's rule would hold this call for a person's approval, or null. */
function gatedWhy(agent: AgentDefinition, tool: ToolDefinition, input: unknown): string | null {
  const rule = agent.requireApproval;
  if (rule === 'side-effects' && !readOnlyFor(tool, input)) return 'requireApproval: side-effects';
  if (Array.isArray(rule) && rule.includes(tool.name)) return `requireApproval names ${tool.name}`;
  if (tool.needsApproval === true) return `${tool.name} declares needsApproval`;
  if (typeof tool.needsApproval === 'function') {
    try {
      if (tool.needsApproval(input)) return `${tool.name}'s needsApproval says yes for this input`;
    } catch {
      return `${tool.name}'s needsApproval throws for this input (counted as yes)`;
    }
  }
  return null;
}

async function rerunTools(options: ReplayOptions, registry: ToolRegistry, runId: string, calls: readonly RecordedCall[], ledger: ReadonlyMap<string, { content: unknown; is_error: boolean }>): Promise<Divergence[]> {
  const dir = fs.mkdtempSync(path.join(options.scratchRoot ?? os.tmpdir(), 'durable-agent-replay-'));
  const divergences: Divergence[] = [];
  try {
    await options.setup?.({ dir });
    for (const call of calls) {
      const recorded = ledger.get(call.id);
      if (!recorded || !registry.get(call.name)) continue;
      const now = await executeCall(registry, runId, call);
      const before = JSON.stringify(recorded.content);
      const after = JSON.stringify(now.content);
      if (before !== after || recorded.is_error !== now.is_error) divergences.push({ kind: 'result-differs', callId: call.id, tool: call.name, recorded: shortened(before), now: shortened(after) });
    }
  } finally {
    await options.teardown?.({ dir });
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return divergences;
}

function shortened(json: string): string {
  return json.length > 200 ? `${json.slice(0, 197)}…` : json;
}

/** The report in lines, as the command prints it. */
export function replayLines(report: ReplayReport): string[] {
  const pinned = report.pinnedVersion === null ? '' : report.pinnedVersion === report.version ? ' (the version it started with)' : ` (it started with version ${report.pinnedVersion})`;
  const lines = [`replay of the run ${report.runId} against ${report.agent} version ${report.version}${pinned}: ${report.calls} recorded calls`];
  for (const divergence of report.divergences) lines.push(`  ${divergence.callId} ${divergence.tool}: ${divergenceWords(divergence)}`);
  lines.push(report.divergences.length === 0 ? 'no divergence: today\'s agent takes every recorded call as the run did (exit 0)' : `${report.divergences.length} ${report.divergences.length === 1 ? 'divergence' : 'divergences'} (exit 1)`);
  return lines;
}

function divergenceWords(divergence: Divergence): string {
  switch (divergence.kind) {
    case 'tool-gone':
      return 'the tool is gone: the model would be told it is unknown';
    case 'input-refused':
      return `today's input schema refuses the recorded input (${divergence.problem})`;
    case 'would-wait-for-a-person':
      return `today's rule would hold it for a person's approval (${divergence.why}); the run did not wait`;
    case 'result-differs':
      return `its result differs: recorded ${divergence.recorded}, now ${divergence.now}`;
  }
}
