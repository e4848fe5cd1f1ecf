/**
 * Starting a run under an id that is already taken: the stored run is the one asked for, so it
 * is attached to, never started again. A finished run answers with its stored result and runs
 * nothing; an unfinished one is resumed (by the caller, under the lock it holds); a stored run
 * that was started with another task, system prompt or model is refused, with what differs.
 */
import type { AgentStateName } from '../../machines/agent-loop.types.ts';
import type { RunResult } from '../core/run-events.ts';
import { foldJournal } from '../store/fold-journal.ts';
import type { LoadedRun } from '../store/store.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';
import { runResultOf } from './run-result.ts';

/** The ends from which nothing goes on by itself: attaching answers with what is stored. */
const ENDED: readonly AgentStateName[] = ['done', 'failed', 'cancelled'];

export class RunIdTakenError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'RunIdTakenError';
  constructor(
    readonly runId: string,
    readonly location: string,
    /** What the stored run was started with, against what was given now: one line each. */
    readonly differences: readonly string[],
  ) {
    super(
      `The run ${runId} in ${location} was started with another ${differences.map((line) => line.split(':')[0]).join(', ')}: ${differences.join('; ')}. ` +
        'Nothing was written. Start it with the same task (to attach to it), or give the new task a new run id (or ifExists: "new" to archive this run and start over under its id).',
    );
  }
}

/** What an attach asks of the run: what must be the same for it to be the same run. */
export interface AttachRequest {
  runId: string;
  location: string;
  task: string;
  system: string | null;
  model: string;
}

export type Attached = { result: RunResult } | { resume: true };

/** The stored run's answer, or that it is to be resumed; RunIdTakenError when it is another run. */
export function attachTo(loaded: LoadedRun, request: AttachRequest): Attached {
  const view = foldJournal(request.location, loaded);
  const differences: string[] = [];
  if (view.context.task !== request.task) differences.push(`task: stored ${quoted(view.context.task)}, given ${quoted(request.task)}`);
  if ((view.context.system ?? null) !== request.system) differences.push(`system prompt: stored ${quoted(view.context.system)}, given ${quoted(request.system)}`);
  const model = loaded.header.startedBy?.model;
  if (model !== undefined && model !== request.model) differences.push(`model: stored ${model}, given ${request.model}`);
  if (differences.length > 0) throw new RunIdTakenError(request.runId, request.location, differences);
  return ENDED.includes(view.state) ? { result: runResultOf(loaded.header.runId, view.state, view.context) } : { resume: true };
}

function quoted(text: string | null): string {
  if (text === null) return 'none';
  const flat = text.replace(/\s+/g, ' ');
  return JSON.stringify(flat.length > 60 ? `${flat.slice(0, 57)}…` : flat);
}
