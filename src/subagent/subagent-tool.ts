/**
 * A sub-agent as a tool: a call starts a child run of another agent, whose id is derived from
 * the parent run and the call's tool_use_id, so that a parent killed at any point and resumed
 * attaches to the same child instead of starting another (a finished child answers from its
 * store, an unfinished one is resumed where it stopped, one never started is started). The call
 * is therefore safe to repeat — declared idempotent, a resume runs it again — and the child's own
 * side effects follow the child's own ledger. The child's final answer is the call's result.
 */
import { createHash } from 'node:crypto';
import type { AgentDefinition } from '../agent/agent-definition.ts';
import { ControlRequestedError } from '../control/run-control.ts';
import { openRun } from '../runtime/run-handle.ts';
import { startRun } from '../runtime/run-api.ts';
import type { FileRuns } from '../store/file-runs.ts';
import type { RunStore } from '../store/store.ts';
import type { ToolDefinition } from '../tools/tool.ts';

export interface SubagentToolOptions {
  /** The tool's name as the model sees it. Default: the agent's name, as a tool name. */
  name?: string | undefined;
  /** What the model is told the tool does. Default: delegating a task to the agent. */
  description?: string | undefined;
  /**
   * Where the child runs are kept: a folder of runs (FileRuns), or the store of a child run by
   * its id (on PostgreSQL: `(id) => new PgRunStore(pool, id)`).
   */
  runs: FileRuns | ((childRunId: string) => RunStore);
  /** How long one child may run before the call is given up (default: 1 hour). The child itself goes on. */
  timeoutMs?: number | undefined;
  /** Crash drills of the children (as crashAfter of a run; the kill stops the parent too). */
  crashAfter?: string | undefined;
}

const DEFAULT_TIMEOUT_MS = 3_600_000;
const MAX_RUN_ID = 128;

/**
 * The id of the child a call starts: the parent's id and the call's, so that it is the same on
 * every resume of the parent. Cut with a hash of the whole where it would be too long.
 */
export function childRunIdOf(parentRunId: string, toolUseId: string): string {
  const id = `${parentRunId}.${toolUseId}`.replace(/[^A-Za-z0-9._-]/g, '_');
  if (id.length <= MAX_RUN_ID) return id;
  const hash = createHash('sha256').update(id).digest('hex').slice(0, 16);
  return `${id.slice(0, MAX_RUN_ID - hash.length - 1)}.${hash}`;
}

export function subagentTool(agent: AgentDefinition, options: SubagentToolOptions): ToolDefinition<{ task: string }> {
  const storeOf = (id: string): RunStore => (typeof options.runs === 'function' ? options.runs(id) : options.runs.store(id));
  return {
    name: options.name ?? agent.name.replace(/[^A-Za-z0-9_-]/g, '_'),
    description: options.description ?? `Delegate a task to the ${agent.name} agent; its final answer is the result.`,
    inputSchema: { type: 'object', properties: { task: { type: 'string', description: 'what the sub-agent is to do' } }, required: ['task'] },
    readOnly: false,
    // Starting the child under its derived id a second time attaches to it: repeating the call repeats nothing.
    idempotent: true,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    async run({ task }, ctx) {
      const childRunId = childRunIdOf(ctx.runId, ctx.toolUseId);
      const store = storeOf(childRunId);
      // A cancel of the parent reaches the child, in its own inbox: the child ends cancelled too.
      const onAbort = () => {
        const reason: unknown = ctx.signal.reason;
        if (reason instanceof ControlRequestedError && reason.request.kind === 'cancel') {
          void openRun({ store })
            .cancel({ by: reason.request.by, reason: `its parent run ${ctx.runId} was cancelled` })
            .catch(() => {});
        }
      };
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      try {
        const result = await startRun({ agent, store, task, runId: childRunId, command: 'subagent', ...(options.crashAfter ? { crashAfter: options.crashAfter } : {}) });
        if (result.status === 'done') return result.text ?? '(the sub-agent gave no answer)';
        const why = result.failure?.message ?? (result.waiting?.length ? `it waits for a person's decision on ${result.waiting.map((call) => call.name).join(', ')}` : result.status);
        throw new Error(`the sub-agent ${agent.name} (run ${childRunId}) ended ${result.status}: ${why}`);
      } finally {
        ctx.signal.removeEventListener('abort', onAbort);
      }
    },
  };
}
