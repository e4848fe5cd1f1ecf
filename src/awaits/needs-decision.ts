/**
 * Which calls of a reply need a person's decision before they go on, evaluated once as the
 * reply arrives: the answer goes into the MODEL_REPLY event, so it is in checkpoint A and a
 * resume (or another process) reads it from the journal instead of asking the tools again.
 */
import { toolUsesOf } from '../../machines/agent-loop.logic.ts';
import type { DecisionNeed, ModelReply, ToolUseBlock } from '../../machines/agent-loop.types.ts';
import { childRunCallOf } from '../tools/child-run-call.ts';
import { readOnlyFor, type ToolDefinition } from '../tools/tool.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';
import { ASK_USER } from './ask-user.ts';
import { isWaitTool, waitInputProblem } from './wait-tool.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** A run's rule for approvals: tools by name, or every tool that is not read-only. */
export type RequireApproval = readonly string[] | 'side-effects';

export interface DecisionPolicy {
  requireApproval: RequireApproval | undefined;
  allowQuestions: boolean;
  /**
   * The run queues the runs its calls make for any process to drive (a fleet's): a call of a tool
   * that queues its child (a sub-agent) then waits for that child's end instead of running.
   */
  queuesChildren?: boolean | undefined;
}

/** requireApproval names a tool the run does not offer. */
export class UnknownApprovalToolError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'UnknownApprovalToolError';
  constructor(
    readonly unknown: readonly string[],
    readonly tools: readonly string[],
  ) {
    super(
      `requireApproval names ${unknown.map((name) => `"${name}"`).join(', ')}, which this run does not offer. ` +
        `The tools are: ${tools.join(', ') || 'none'}; name some of them, or give 'side-effects' for every tool that is not read-only.`,
    );
  }
}

/** Refuses a policy that names tools the run does not have (a typo would silently approve nothing). */
export function checkDecisionPolicy(policy: DecisionPolicy, tools: readonly ToolDefinition[]): void {
  const rule = policy.requireApproval;
  if (rule === undefined || rule === 'side-effects') return;
  const names = tools.map((tool) => tool.name);
  const unknown = rule.filter((name) => !names.includes(name));
  if (unknown.length > 0) throw new UnknownApprovalToolError(unknown, names);
}

/**
 * Answered at once when no call's answer needs a wait (most calls: a tool's readOnly flag, an
 * approval rule), and a promise only from the first call that does: asked at every reply, and an
 * async function and an await a call cost a turn of the in-memory loop more than the rest of the question.
 */
export function needsDecisionOf(reply: ModelReply, registry: ToolRegistry, policy: DecisionPolicy): Promise<Record<string, DecisionNeed> | undefined> | Record<string, DecisionNeed> | undefined {
  let flags: Record<string, DecisionNeed> | undefined;
  const calls = toolUsesOf(reply);
  for (let index = 0; index < calls.length; index++) {
    const call = calls[index]!;
    const need = needOf(call.name, call.input, registry, policy);
    if (need instanceof Promise) return needsFrom(calls, index, need, flags, registry, policy);
    if (need) (flags ??= {})[call.id] = need;
  }
  return flags;
}

/** The rest of needsDecisionOf from the call at `index`, whose answer is a promise, in the calls' order. */
async function needsFrom(
  calls: readonly ToolUseBlock[],
  index: number,
  first: Promise<DecisionNeed | null>,
  found: Record<string, DecisionNeed> | undefined,
  registry: ToolRegistry,
  policy: DecisionPolicy,
): Promise<Record<string, DecisionNeed> | undefined> {
  let flags = found;
  for (let at = index; at < calls.length; at++) {
    const call = calls[at]!;
    const need = at === index ? await first : await needOf(call.name, call.input, registry, policy);
    if (need) (flags ??= {})[call.id] = need;
  }
  return flags;
}

function needOf(name: string, input: unknown, registry: ToolRegistry, policy: DecisionPolicy): DecisionNeed | null | Promise<DecisionNeed | null> {
  if (name === ASK_USER && policy.allowQuestions) return 'answer';
  const tool = registry.get(name);
  // An unknown tool is rejected without running: there is nothing to approve.
  if (!tool) return null;
  // A wait waits for its time or its event; one whose input is no wait is run, and its run() says why it cannot be done.
  if (isWaitTool(tool)) return waitNeed(name, input, registry);
  const rule = policy.requireApproval;
  if (rule === 'side-effects' ? !readOnlyFor(tool, input) : rule?.includes(name)) return 'approval';
  // Input its schema refuses is rejected without running: no child is queued for it.
  if (policy.queuesChildren && childRunCallOf(tool)) return childOrLater(tool, name, input, registry);
  return approvalNeed(tool, name, input, registry);
}

/** The tool's own approval rule: a predicate asked with the typed input, or a fixed answer. */
function approvalNeed(tool: ToolDefinition, name: string, input: unknown, registry: ToolRegistry): DecisionNeed | null | Promise<DecisionNeed | null> {
  if (typeof tool.needsApproval === 'function') return approvalAsked(tool, name, input, registry);
  return tool.needsApproval === true ? 'approval' : null;
}

async function waitNeed(name: string, input: unknown, registry: ToolRegistry): Promise<DecisionNeed | null> {
  return waitInputProblem(input) === null && !('problem' in (await registry.checkInput(name, input))) ? 'wait' : null;
}

/** A child run's call whose input fits is queued ('child'); one whose input does not goes on to the approval rule. */
async function childOrLater(tool: ToolDefinition, name: string, input: unknown, registry: ToolRegistry): Promise<DecisionNeed | null> {
  if (!('problem' in (await registry.checkInput(name, input)))) return 'child';
  return approvalNeed(tool, name, input, registry);
}

async function approvalAsked(tool: ToolDefinition, name: string, input: unknown, registry: ToolRegistry): Promise<DecisionNeed | null> {
  const typed = await registry.typedInput(name, input);
  // Input its Standard Schema refuses is rejected without running, as an unknown tool is: nothing to approve.
  if ('problem' in typed) return null;
  try {
    return typeof tool.needsApproval === 'function' && tool.needsApproval(typed.input) ? 'approval' : null;
  } catch {
    // A predicate that cannot decide must not let a call through unasked.
    return 'approval';
  }
}
