/**
 * Starting a run under an id that is already taken: the stored run is the one asked for, so it
 * is attached to, never started again. A finished run answers with its stored result and runs
 * nothing; an unfinished one is resumed (by the caller, under the lock it holds); a stored run
 * that was started with another task, system prompt or model is refused, with what differs.
 */
import type { AgentStateName } from '../../machines/agent-loop.types.ts';
import type { AgentDefinition } from '../agent/agent-definition.ts';
import type { RunResult } from '../core/run-events.ts';
import { RunExistsError } from '../store/errors.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import type { RunOrigin } from '../store/journal/journal-record.ts';
import { checkRunId, RunIdMismatchError, runIdWasGiven, StoreHoldsOtherRunError } from '../store/run-id.ts';
import type { LoadedRun, RunStore } from '../store/store.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';
import { checkAgentPin } from './agent-run.ts';
import { checkOrigin } from './run-origin.ts';
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

/** The id a start gives its run: the one asked for, the store's, or none (a new random one). */
export function runIdOf(runId: string | undefined, store: RunStore): string | null {
  const asked = runId === undefined ? undefined : checkRunId(runId);
  const stores = store.runId;
  if (asked !== undefined && stores !== undefined && asked !== stores) throw new RunIdMismatchError(asked, stores, store.location);
  return asked ?? stores ?? null;
}

/**
 * The stored run of this id, if the store holds one: its result when it ended, or that it is to
 * be resumed. Null when the store holds no run, or a run of a random id (started without one, or
 * before run ids): that one is cleared as any start clears it. A run of another id its user gave
 * is refused (StoreHoldsOtherRunError): clearing it would make its next start run it again.
 * `agent` and `offered`: the definition and the origin that start it now.
 */
export async function attachToStored(store: RunStore, asked: Omit<AttachRequest, 'location'>, agent: AgentDefinition | undefined, offered: RunOrigin): Promise<Attached | null> {
  if (!(await store.exists())) return null;
  const loaded = await store.load({ fromLastSnapshot: true });
  const { runId } = asked;
  if (loaded.header.runId !== runId) {
    if (runIdWasGiven(loaded.header)) throw new StoreHoldsOtherRunError(runId, loaded.header.runId, store.location);
    return null;
  }
  checkAgentPin(store.location, loaded.header, agent);
  const attached = attachTo(loaded, { ...asked, location: store.location });
  // An ended run is answered from the store: its tools must still be the ones it ran with, as a resume checks.
  if ('result' in attached) checkOrigin(store.location, loaded.header, offered, false);
  return attached;
}

/**
 * Makes room for a new run: a finished run is archived; an unfinished one is archived only when
 * the user asked for a fresh start, and refused otherwise. Returns where the old run went.
 */
export async function clearFinishedRun(store: RunStore, fresh: boolean): Promise<string | null> {
  if (!(await store.exists())) return null;
  if (!fresh) {
    const view = foldJournal(store.location, await store.load({ fromLastSnapshot: true }));
    if (view.state !== 'done') throw new RunExistsError(store.location, view.state, view.context.turn);
  }
  return store.archive();
}
