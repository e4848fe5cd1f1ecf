/**
 * How a run stops between two steps without failing: the runtime throws it, a capability (cancel
 * and pause, a worker's lost lease) may throw its own kind of it, and every caller catches it alike.
 */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';
/** The run was asked to stop between two steps; everything it did is saved and a resume goes on. */
export class RunStoppedError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'stopped';
  override readonly name: string = 'RunStoppedError';
  constructor(readonly why: string) {
    super(`The run stopped between two steps (${why}); everything it did is saved, and a resume goes on from there.`);
  }
}

/**
 * The call queued its child for the fleet and the child has not ended: the calling run stops
 * here without an outcome for the call, lets go of its worker, and is taken up again once the
 * child has ended, when the call (run again, as it is safe to repeat) answers with the child's end.
 * Calls of one reply that queued theirs side by side stop the run together: `childRunIds` are all.
 */
export class ChildRunAwaitedError extends RunStoppedError {
  override readonly name = 'ChildRunAwaitedError';
  readonly childRunIds: readonly string[];
  constructor(
    readonly parentRunId: string,
    childRunIds: string | readonly string[],
  ) {
    const ids = typeof childRunIds === 'string' ? [childRunIds] : [...childRunIds];
    super(`run ${parentRunId} waits for its sub-agent run${ids.length === 1 ? '' : 's'} ${ids.join(', ')}, queued for any worker; it is taken up again when ${ids.length === 1 ? 'that run has' : 'those runs have'} ended`);
    this.childRunIds = ids;
  }
}
