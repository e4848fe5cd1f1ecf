import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** A command line the parser refuses: nothing was read or written; the message says what to give. */
export class UsageError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'UsageError';
}
