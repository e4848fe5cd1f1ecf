/** What the console refuses: to serve beyond this machine without a token, a run it does not know. */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** --host names an address other machines reach, and no token guards it. */
export class ConsoleTokenRequiredError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'ConsoleTokenRequiredError';
  constructor(readonly host: string) {
    super(
      `The console would listen on ${host}, which other machines can reach, with no token of your choosing: ` +
        'give one in DURABLE_AGENT_CONSOLE_TOKEN=NAME:SECRET or in a file only you can read (--token-file FILE), or tokens of durable-agent token add (--tokens-file FILE), or leave --host out to listen on 127.0.0.1 only.',
    );
  }
}

/** A run key that names no run of the console's folders or fleet. */
export class ConsoleRunNotFoundError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'ConsoleRunNotFoundError';
  constructor(readonly key: string) {
    super(`No run ${JSON.stringify(key)} among the console's folders and fleet: open the list of runs and pick one there.`);
  }
}

/** A state-changing request on a run the console only reads (archived, or its journal damaged). */
export class ConsoleReadOnlyRunError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'ConsoleReadOnlyRunError';
  constructor(
    readonly key: string,
    readonly why: string,
  ) {
    super(`Run ${key} is shown read-only (${why}): nothing was written.`);
  }
}
