/**
 * What a person may do to a run from the console, each through the same function the command
 * line calls (approve, deny, answer, cancel, pause, unpause): the console writes a decision or
 * a request to the run's inbox, and the process that drives the run makes it a record. The one
 * record written here is cancelRun's, for a run no process drives, as `cancel` writes it.
 */
import type { Decision } from '../../machines/agent-loop.types.ts';
import { decide, type DecideInput } from '../approval/decide.ts';
import type { ControlRequest } from '../control/control-request.ts';
import { cancelRun, type ControlOutcome, pauseRun, unpauseRun } from '../runtime/cancel-run.ts';
import type { RunStore } from '../store/store.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { ConsoleReadOnlyRunError } from './console-errors.ts';
import type { ConsoleRun } from './run-sources.ts';

export interface DecisionAsked {
  toolUseId: string;
  verdict: DecideInput['verdict'];
  reason?: string | undefined;
  note?: string | undefined;
  text?: string | undefined;
  /** approved: the input the call runs with instead of the model's (checked against the tool's schema). */
  input?: unknown;
}

export async function decideFor(run: ConsoleRun, asked: DecisionAsked, by: string): Promise<Decision> {
  const store = writable(run);
  const request: DecideInput = { tool_use_id: asked.toolUseId, verdict: asked.verdict, by };
  if (asked.reason !== undefined) request.reason = asked.reason;
  if (asked.note !== undefined) request.note = asked.note;
  if (asked.text !== undefined) request.text = asked.text;
  if (asked.input !== undefined) request.input = asked.input;
  const tools = asked.input === undefined ? undefined : await toolsOf(run, store);
  return decide(store, request, { tools });
}

export type ControlAsked = { kind: 'cancel'; reason: string | null } | { kind: 'pause' } | { kind: 'unpause' };

export async function controlFor(run: ConsoleRun, asked: ControlAsked, by: string): Promise<ControlOutcome | { outcome: 'unpaused' | 'not-paused'; request: ControlRequest | null }> {
  const store = writable(run);
  if (asked.kind === 'cancel') return cancelRun({ store, by, reason: asked.reason });
  if (asked.kind === 'pause') return pauseRun({ store, by });
  const pause = await unpauseRun({ store });
  return { outcome: pause ? 'unpaused' : 'not-paused', request: pause };
}

function writable(run: ConsoleRun): RunStore {
  if (!run.store) throw new ConsoleReadOnlyRunError(run.key, 'an archived run');
  return run.store;
}

/**
 * The tools of a run the command line started, for the check of an edited input: the journal
 * pins their schemas and decide() uses a tool only if its schema is the pinned one. A run of a
 * program or a fleet agent: none known here, and decide() says so.
 */
async function toolsOf(run: ConsoleRun, store: RunStore): Promise<ToolDefinition[] | undefined> {
  if (run.runDir === null) return undefined;
  const origin = (await store.load()).header.startedBy;
  if (origin?.command === 'demo') return (await import('../demo/demo-tools.ts')).demoTools(run.runDir);
  if (origin?.command === 'run') return (await import('../tools/file-tools.ts')).fileTools(run.runDir);
  return undefined;
}
