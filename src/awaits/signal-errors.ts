/** Why a signal was refused before anything was written (apart, so that durable-agent/errors loads no store module). */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

export type SignalRefusal = 'bad-name' | 'bad-id' | 'bad-data' | 'no-run' | 'ended';

/** A signal that cannot be sent; nothing was written. */
export class SignalRefusedError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'SignalRefusedError';
  constructor(
    readonly reason: SignalRefusal,
    message: string,
  ) {
    super(message);
  }
}
