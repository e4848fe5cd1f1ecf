/**
 * What a person may do to a run from the console, each through the same function the command
 * line calls (approve, deny, answer, cancel, pause, unpause): the console writes a decision or
 * a request to the run's inbox, and the process that drives the run makes it a record. The one
 * record written here is cancelRun's, for a run no process drives, as `cancel` writes it.
 */
import type { Decision } from '../../machines/agent-loop.types.ts';
import { decide, type DecideInput } from '../awaits/decide.ts';
import { deciderOf } from '../runtime/tree-decisions.ts';
import { type SentSignal, sendSignal } from '../awaits/send-signal.ts';
import type { ControlRequest } from '../control/control-request.ts';
import { cancelRun, type ControlOutcome, pauseRun, unpauseRun } from '../runtime/cancel-run.ts';
import { openRunsFolder } from '../store/open-store.ts';
import type { RunStore } from '../store/store.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import fs from 'node:fs';
import type { ParentCallAfterFork } from '../fork/fork-plan.ts';
import { forkRun } from '../fork/fork-run.ts';
import { ConsoleReadOnlyRunError } from './console-errors.ts';
import { type ConsoleRun, keyOf } from './run-sources.ts';

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
  // A call one of its sub-agent runs waits on is decided in that run's inbox, as `approve --run PARENT` does.
  const store = await deciderOf(writable(run), { tool_use_id: asked.toolUseId });
  const request: DecideInput = { tool_use_id: asked.toolUseId, verdict: asked.verdict, by };
  if (asked.reason !== undefined) request.reason = asked.reason;
  if (asked.note !== undefined) request.note = asked.note;
  if (asked.text !== undefined) request.text = asked.text;
  if (asked.input !== undefined) request.input = asked.input;
  const tools = asked.input === undefined ? undefined : await toolsOf(run, store);
  return decide(store, request, { tools });
}

/**
 * Sends a wait's event to the run, as `durable-agent signal` does: its wait takes it once. With
 * the waiting call's id, to the run of the tree that waits on it (a sub-agent run's wait).
 */
export async function signalFor(run: ConsoleRun, asked: { name: string; data: unknown; toolUseId?: string | undefined }, by: string): Promise<SentSignal> {
  const store = writable(run);
  const target = asked.toolUseId === undefined ? store : await deciderOf(store, { tool_use_id: asked.toolUseId });
  return sendSignal(target, { name: asked.name, data: asked.data, by });
}

export type ControlAsked = { kind: 'cancel'; reason: string | null } | { kind: 'pause' } | { kind: 'unpause' };

export async function controlFor(run: ConsoleRun, asked: ControlAsked, by: string): Promise<ControlOutcome | { outcome: 'unpaused' | 'not-paused'; request: ControlRequest | null }> {
  const store = writable(run);
  if (asked.kind === 'cancel') return cancelRun({ store, by, reason: asked.reason });
  if (asked.kind === 'pause') return pauseRun({ store, by });
  const pause = await unpauseRun({ store });
  return { outcome: pause ? 'unpaused' : 'not-paused', request: pause };
}

export interface ForkMade {
  /** The new run's key in the console, and its id: a run by id in the parent's folder. */
  key: string;
  runId: string;
  state: string;
  records: number;
  openCalls: Array<{ id: string; name: string }>;
  afterFork: ParentCallAfterFork[];
}

/**
 * A fork of a folder run at one of its records, through forkRun as `durable-agent fork` makes it,
 * into a new run by id in the same folder (named after the parent and the record), so it is in
 * the list at once. A fleet run is forked with `durable-agent fork --run ID`.
 */
export async function forkFor(run: ConsoleRun, at: number): Promise<ForkMade> {
  const store = writable(run);
  if (!run.folder) throw new ConsoleReadOnlyRunError(run.key, 'a fleet run: fork it with durable-agent fork --run ID --to-run NEW');
  const runs = openRunsFolder(run.folder.root);
  const parentId = (await store.load()).header.runId;
  const base = `${parentId.slice(0, 100)}-at-${at}`;
  let id = base;
  for (let n = 2; fs.existsSync(runs.store(id).dir); n++) id = `${base}-${n}`;
  const result = await forkRun({ from: store, to: runs.store(id), at });
  return { key: keyOf(run.folder.index, id, null), runId: result.runId, state: result.state, records: result.records, openCalls: result.openCalls, afterFork: result.afterFork };
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
