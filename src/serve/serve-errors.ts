/** What `durable-agent serve` refuses, each with the API's stable code and HTTP status. */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** A request the API answers with an error body: its status and code are the wire format's. */
export class ApiRequestError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'ApiRequestError';
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 413,
    readonly code: 'unauthorized' | 'forbidden' | 'not-found' | 'conflict' | 'invalid' | 'too-large',
    message: string,
  ) {
    super(message);
  }
}

/** POST /v1/runs names an agent serve does not drive (folder) or no worker registered (fleet). */
export class ServeUnknownAgentError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'ServeUnknownAgentError';
  constructor(
    readonly agent: string,
    /** The agents serve drives over a folder; null over a fleet (its workers register theirs). */
    readonly known: readonly string[] | null,
  ) {
    super(
      known === null
        ? `No worker of this fleet has registered an agent named ${JSON.stringify(agent)}, so none would take the run up: check the name, or start a worker that has it (durable-agent worker --agents FILE). Nothing was queued.`
        : known.length
          ? `No agent named ${JSON.stringify(agent)} here (the agents this server drives: ${known.join(', ')}): start the run with one of them. Nothing was started.`
          : `This server was started without --agents, so it starts no run: restart it with --agents FILE (the module of your agents). Nothing was started.`,
    );
  }
}

/** Serve over a folder needs the agents it drives; over a fleet the workers have them. */
export class ServePlaceError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'ServePlaceError';
  constructor(readonly problem: string) {
    super(`serve cannot start: ${problem}.`);
  }
}
