/** Why a fork was refused; nothing was written, and the parent is never changed. */
export type ForkProblem = 'no-such-record' | 'target-holds-run' | 'same-run' | 'message-not-allowed' | 'target-cannot-fork';

export class ForkRefusedError extends Error {
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
