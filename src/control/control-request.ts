/**
 * Cancel and pause, asked of a run from outside the process that drives it. Only the run's
 * writer writes its journal: a request is written to the run's control inbox (a file in
 * DIR/.durable-agent/control/, a row of da_controls), and the writer honours it at its next step
 * boundary. A cancel becomes the run's final state `cancelled`; a pause stops the process like
 * Ctrl-C, and stays in the inbox (status says "paused by …") until a resume clears it.
 */
import type { Cancellation } from '../../machines/agent-loop.types.ts';
import type { ControlKind, ControlRequest } from '../store/inbox/inboxes.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';
import { isSealedValue } from '../seal/value-codec.ts';

export { CONTROL_KINDS, controlProblem } from '../store/inbox/inboxes.ts';
export type { ControlInbox, ControlKind, ControlRequest } from '../store/inbox/inboxes.ts';

export function cancellationOf(request: ControlRequest): Cancellation {
  return { by: request.by, reason: request.reason, at: request.at };
}

/** The request that counts: a cancel outranks a pause. */
export function strongest(requests: readonly ControlRequest[]): ControlRequest | null {
  return requests.find((request) => request.kind === 'cancel') ?? requests.find((request) => request.kind === 'pause') ?? null;
}

export function requestWords(request: Pick<ControlRequest, 'by' | 'reason' | 'at'>): string {
  // A sealed run's reason read without its key is named as sealed, never printed as its sealed string.
  const reason = request.reason && isSealedValue(request.reason) ? '(sealed)' : request.reason;
  return `by ${request.by} at ${new Date(request.at).toISOString()}${reason ? ` (reason: ${reason})` : ''}`;
}

/** A resume of a run that was cancelled: refused (fork it to try again from one of its steps). */
export class RunCancelledError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'RunCancelledError';
  constructor(
    readonly location: string,
    readonly cancellation: Cancellation,
    readonly forkAdvice: string,
  ) {
    super(`The run in ${location} was cancelled ${requestWords(cancellation)}: a cancelled run is never resumed. ${forkAdvice} Nothing was written.`);
  }
}

/** cancel or pause refused: what the run's state is, and what to do instead. Nothing was written. */
export class ControlRefusedError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'ControlRefusedError';
  constructor(
    /** What was asked: a cancel or a pause. */
    readonly asked: ControlKind,
    readonly why: 'finished' | 'not-running' | 'already-asked',
    message: string,
  ) {
    super(message);
  }
}
