/**
 * The errors of durable-agent/client. They extend the package's one base class, whose module
 * imports nothing, so a browser bundle of the client stays free of Node.
 */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** The codes the client gives an answer that carried no error body of the API's (a proxy's page, say). */
const CODE_OF_STATUS: Readonly<Record<number, string>> = {
  400: 'invalid',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not-found',
  409: 'conflict',
  413: 'too-large',
};

/** The code of an answer whose body said none. */
export function codeOfStatus(status: number): string {
  return CODE_OF_STATUS[status] ?? (status >= 500 ? 'internal' : 'http-error');
}

/**
 * The API answered with an error (a 4xx or 5xx), or with something the client cannot read.
 * `code` is the server's stable word ('unauthorized', 'forbidden', 'not-found', 'conflict',
 * 'invalid', 'too-large', 'internal'); the message is the server's own.
 */
export class ApiError extends DurableAgentError {
  // The server refused or failed this request; the run, if any, is as the server keeps it.
  static override readonly kind: ErrorKind = 'refused';
  override readonly name: string = 'ApiError';
  constructor(
    /** The HTTP status of the answer. */
    readonly status: number,
    /** The server's stable word for what went wrong. */
    readonly code: string,
    /** The server's message, as it gave it. */
    readonly serverMessage: string,
    /** What was asked, as `METHOD /path`. */
    readonly request: string,
  ) {
    super(`${request} answered ${status} ${code}: ${serverMessage}${advice(status)}`);
  }
}

function advice(status: number): string {
  if (status === 401) return ' Check the token the client was created with.';
  if (status === 403) return ' The token may not do this (a read token cannot steer; a tenant token sees its own runs only).';
  return '';
}

/** The API could not be reached (a refused connection, a lost network, a timeout) after every retry. */
export class ApiUnreachableError extends DurableAgentError {
  // Like a store that cannot be read: nothing is known to have changed, and the same call may be tried again later.
  static override readonly kind: ErrorKind = 'store';
  override readonly name: string = 'ApiUnreachableError';
  constructor(
    /** What was asked, as `METHOD /path`. */
    readonly request: string,
    /** How many times it was tried. */
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    const cause = options?.cause instanceof Error ? ` (${options.cause.message})` : '';
    super(`${request}: the API could not be reached after ${attempts} ${attempts === 1 ? 'try' : 'tries'}${cause}. Check the base URL and that the server runs, then try again.`, options);
  }
}
