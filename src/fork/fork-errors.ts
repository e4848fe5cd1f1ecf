/** Why a fork was refused; nothing was written, and the parent is never changed. */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';
export type ForkProblem = 'no-such-record' | 'target-holds-run' | 'same-run' | 'message-not-allowed' | 'target-cannot-fork';

export class ForkRefusedError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'ForkRefusedError';
  constructor(
    /** The parent run's location. */
    readonly location: string,
    readonly problem: ForkProblem,
    detail: string,
  ) {
    super(`Cannot fork the run at ${location}: ${detail}`);
  }
}
