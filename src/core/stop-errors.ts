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
