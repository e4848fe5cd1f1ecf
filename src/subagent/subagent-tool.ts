/**
 * A sub-agent as a tool: a call starts a child run of another agent, whose id is derived from
 * the parent run and the call's tool_use_id, so that a parent killed at any point and resumed
 * attaches to the same child instead of starting another (a finished child answers from its
 * store, an unfinished one is resumed where it stopped, one never started is started). The call
 * is therefore safe to repeat — declared idempotent, a resume runs it again — and the child's own
 * side effects follow the child's own ledger. The child's final answer is the call's result.
 *
 * Together with its parent (the parent's run is ToolContext.caller): a cancel or a pause of the
 * parent reaches the child (child-control.ts); the child may spend the parent's budget left,
 * shared by the reply's sub-agent calls, and what it spent is charged to the parent when the turn
 * closes (charge()); it is traced under the parent's execute_tool span; its header names the
 * parent and the call, so status, list and pending show the tree. Each child is its own run, so
 * calls of one reply run side by side (concurrencySafe).
 */
import { type AgentDefinition, markDelegation } from '../agent/agent-definition.ts';
import { DEFAULT_TENANT } from '../core/tenant.ts';
import type { CrashAction } from '../runtime/crash-points.ts';
import { startRun } from '../runtime/run-api.ts';
import { childRunIdOf, runsFolderOf } from '../runtime/run-tree.ts';
import type { RunsFolder } from '../store/store.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import type { RunStore } from '../store/store.ts';
import type { CallCharge, ToolContext, ToolDefinition } from '../tools/tool.ts';
import type { ChildRuns, QueuedChild } from '../tools/calling-run.ts';
import { withChildRunCall } from '../tools/child-run-call.ts';
import { childEndDecision } from '../awaits/child-step.ts';
import { DECISION_POLL_MS, pause } from '../awaits/decision-step.ts';
import { followParentControl } from './child-control.ts';
import { childHereEnded, drivingChildHere } from './children-here.ts';
import { budgetReachedWords } from '../budget/budget-words.ts';
import { childBudgetOf } from './child-budget.ts';
import { SubagentInputError, SubagentRunsUnknownError } from './subagent-errors.ts';

export { childRunIdOf } from '../runtime/run-tree.ts';

export interface SubagentToolOptions {
  /** The tool's name as the model sees it. Default: the agent's name, as a tool name. */
  name?: string | undefined;
  /** What the model is told the tool does. Default: delegating a task to the agent. */
  description?: string | undefined;
  /**
   * Fields of the call's input besides `task` (JSON Schema properties, and which of them are
   * required), e.g. `{ properties: { files: { type: 'array', items: { type: 'string' } } } }`:
   * checked with the input, and given to the child with its task (see taskOf).
   */
  input?: { properties: Record<string, unknown>; required?: readonly string[] | undefined } | undefined;
  /** The child's task from the call's whole input. Default: the task, then the other fields as JSON in an <input> block. */
  taskOf?: ((input: SubagentInput) => string) | undefined;
  /**
   * Where the child runs are kept: a folder of runs (FileRuns), or the store of a child run by
   * its id (on PostgreSQL: `(id) => new PgRunStore(pool, id)`). Default: the folder of runs the
   * parent is in (a file store's), where status, list and pending of the parent find them.
   */
  runs?: RunsFolder | ((childRunId: string) => RunStore) | undefined;
  /** How long one child may run before the call is given up (default: 1 hour). The child itself goes on. */
  timeoutMs?: number | undefined;
  /** Crash drills of the children (as crashAfter of a run; the kill stops the parent too). */
  crashAfter?: string | undefined;
  /** What an armed crash point of a child does (as onCrash of a run): throw SimulatedCrash (the default), 'exit', or a function of its label. */
  onCrash?: CrashAction | undefined;
}

const DEFAULT_TIMEOUT_MS = 3_600_000;

/** A sub-agent call's input: the child's task, and the fields the tool declares besides it. */
export type SubagentInput = { task: string } & Record<string, unknown>;

const TASK_SCHEMA = { type: 'string', description: 'what the sub-agent is to do' };

export function subagentTool(agent: AgentDefinition, options: SubagentToolOptions = {}): ToolDefinition<SubagentInput> {
  const name = options.name ?? agent.name.replace(/[^A-Za-z0-9_-]/g, '_');
  if (options.input && Object.hasOwn(options.input.properties, 'task')) {
    throw new SubagentInputError(name, 'its input fields name "task", which is the child\'s task itself: give the other fields only');
  }
  const taskOf = options.taskOf ?? defaultTaskOf;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // In a fleet (the calling run's worker gives childRuns) the child is a run of the queue, unless runs says where it goes.
  const queueOf = (ctx: ToolContext) => (options.runs === undefined ? (ctx.caller?.childRuns ?? null) : null);
  const storeOf = (ctx: ToolContext): RunStore => {
    const id = childRunIdOf(ctx.runId, ctx.toolUseId);
    const queue = queueOf(ctx);
    if (queue) return queue.store(id);
    const { runs } = options;
    if (typeof runs === 'function') return runs(id);
    const folder = runs ?? (ctx.caller ? runsFolderOf(ctx.caller.store) : null);
    if (!folder) throw new SubagentRunsUnknownError(name, ctx.caller?.store.location ?? null);
    const child = folder.store(id);
    // A run started beside a sealed run is sealed with the same keys: its task is what the
    // calling run's model wrote, content as much as the calling run's own.
    const keys = ctx.caller?.store.keysGiven?.();
    if (keys !== undefined) child.giveKeys?.(keys);
    return child;
  };
  const tool: ToolDefinition<SubagentInput> = {
    name,
    description: options.description ?? `Delegate a task to the ${agent.name} agent; its final answer is the result.`,
    inputSchema: {
      type: 'object',
      properties: { task: TASK_SCHEMA, ...(options.input?.properties ?? {}) },
      required: ['task', ...(options.input?.required ?? [])],
    },
    readOnly: false,
    // Starting the child under its derived id a second time attaches to it: repeating the call repeats nothing.
    idempotent: true,
    // Each child is a run of its own, with its own ledger and lock: calls of one reply may run side by side.
    concurrencySafe: true,
    timeoutMs,
    async run(input, ctx) {
      const task = taskOf(input);
      const runId = childRunIdOf(ctx.runId, ctx.toolUseId);
      const store = storeOf(ctx);
      const queue = queueOf(ctx);
      if (queue) return awaitQueued(queue, await childOf(input, ctx), ctx.signal);
      const trace = ctx.caller?.trace;
      const follow = followParentControl(ctx, store);
      try {
        // A child this process still drives for this call (its parent failed and was resumed here):
        // its end first. A cancel meanwhile reaches it as it would reach a child this call started.
        await childHereEnded(store.location, ctx.signal);
        const budget = await childBudgetOf(agent, ctx.caller, store, ctx.runId);
        const result = await drivingChildHere(store.location, () => follow.during(() =>
          startRun({
            agent,
            store,
            task,
            runId,
            command: 'subagent',
            calledBy: { runId: ctx.runId, toolUseId: ctx.toolUseId },
            ...(ctx.caller ? { tenant: ctx.caller.tenant } : {}),
            ...(budget ? { budget } : {}),
            ...(trace ? { tracer: trace.tracer as never, traceContent: trace.content, traceParent: trace.parent as never } : {}),
            ...(options.crashAfter ? { crashAfter: options.crashAfter, ...(options.onCrash ? { onCrash: options.onCrash } : {}) } : {}),
          }),
        ));
        if (result.status === 'done') return result.text ?? '(the sub-agent gave no answer)';
        const why =
          result.failure?.message ??
          (result.budgetStop ? `its share of the parent run’s budget is spent (${budgetReachedWords(result.budgetStop)})` : result.waiting?.length ? `it waits for a person's decision on ${result.waiting.map((call) => call.name).join(', ')}` : result.status);
        throw new Error(`the sub-agent ${agent.name} (run ${runId}) ended ${result.status}: ${why}`);
      } finally {
        follow.stop();
      }
    },
    async charge(_input, ctx): Promise<CallCharge | null> {
      return chargeOf(storeOf(ctx), ctx.runId);
    },
  };
  /** The child a call queues for the fleet (its budget share and trace taken now: the same on every take-up of the turn). */
  const childOf = async (input: unknown, ctx: ToolContext): Promise<QueuedChild> => {
    const runId = childRunIdOf(ctx.runId, ctx.toolUseId);
    const budget = await childBudgetOf(agent, ctx.caller, storeOf(ctx), ctx.runId);
    const traceParent = ctx.caller?.trace ? (await import('../telemetry/trace-parent.ts')).traceParentOf(ctx.caller.trace.parent as never) : null;
    const task = taskOf(input as SubagentInput);
    return { runId, tenant: ctx.caller?.tenant ?? DEFAULT_TENANT, agent: agent.name, task, calledBy: { runId: ctx.runId, toolUseId: ctx.toolUseId }, timeoutMs, ...(budget ? { budget } : {}), ...(traceParent ? { traceParent } : {}) };
  };
  // In a fleet a call is not run but awaited: the run rests while any worker drives the child.
  withChildRunCall(tool, { runIdOf: (ctx) => childRunIdOf(ctx.runId, ctx.toolUseId), childOf, queueOf });
  // A fleet worker that drives a run with this tool drives the child's agent too.
  return markDelegation(tool, agent);
}

/**
 * A queued child's end, waited for inside the call. Reached only by a call the run did not await
 * (one a person approved first, or one recorded by a release before child awaits): it holds its
 * worker meanwhile, and reads the same end a child await would.
 */
async function awaitQueued(queue: ChildRuns, child: QueuedChild, signal: AbortSignal): Promise<string> {
  await queue.submit(child);
  for (;;) {
    const ended = await queue.outcome(child.runId);
    if (ended) {
      const decision = childEndDecision(child.calledBy.toolUseId, child, 'gaveUp' in ended ? { gaveUp: true, timeoutMs: child.timeoutMs } : ended, Date.now());
      if (decision.verdict === 'answered') return decision.text!;
      throw new Error(decision.reason);
    }
    await pause(DECISION_POLL_MS, signal);
    if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error(`the call stopped waiting for its sub-agent run ${child.runId}`);
  }
}

/** The task, then the call's other fields as JSON: what the child reads as its first message. */
function defaultTaskOf({ task, ...fields }: SubagentInput): string {
  return Object.keys(fields).length === 0 ? task : `${task}\n\n<input>\n${JSON.stringify(fields, null, 2)}\n</input>`;
}

/** What the child of a call spent (its own calls and its children's, as its usage counts them); null when it never started. */
async function chargeOf(store: RunStore, parentRunId: string): Promise<CallCharge | null> {
  if (!(await store.exists())) return null;
  const loaded = await store.load({ fromLastSnapshot: true });
  if (loaded.header.calledBy?.runId !== parentRunId) return null;
  const { context } = foldJournal(store.location, loaded);
  return typeof context.costUsd === 'number' ? { usage: context.usage, costUsd: context.costUsd } : { usage: context.usage };
}

