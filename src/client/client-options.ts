/** What createClient takes, and the settings every call of one client shares. */
import type { BackoffOptions, Sleep } from './backoff.ts';

/** The fetch the client calls: the global one by default (a browser's, Node's), or one you pass. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface RetryOptions extends BackoffOptions {
  /**
   * How many times a request that may safely be repeated (a read, a start) is tried when the API
   * cannot be reached or answers 429, 502, 503 or 504. Default: 3.
   */
  maxAttempts?: number | undefined;
  /** How to wait between tries (tests pass one that records the waits). */
  sleep?: Sleep | undefined;
}

export interface ClientOptions {
  /** Where `durable-agent serve` listens, e.g. `https://agents.example.com`; the paths /v1/... are added. */
  baseUrl: string;
  /** The bearer token sent with every request. */
  token?: string | undefined;
  /** The fetch to call. Default: globalThis.fetch. */
  fetch?: FetchLike | undefined;
  /** Retries of the plain requests (followRun takes its own). */
  retry?: RetryOptions | undefined;
}

/** One client's settings, resolved. */
export interface ClientConfig {
  base: string;
  token: string | undefined;
  fetch: FetchLike;
  retry: RetryOptions;
}

export function clientConfig(options: ClientOptions): ClientConfig {
  const fetchImpl = options.fetch ?? (globalThis.fetch ? (input: string, init: RequestInit) => globalThis.fetch(input, init) : undefined);
  if (!fetchImpl) throw new TypeError('createClient: no fetch in this environment; pass one as `fetch`.');
  return { base: options.baseUrl.replace(/\/+$/, ''), token: options.token, fetch: fetchImpl, retry: options.retry ?? {} };
}

/** The headers of every request: the token, and what the answer should be. */
export function baseHeaders(config: ClientConfig, accept: string): Record<string, string> {
  const headers: Record<string, string> = { accept };
  if (config.token !== undefined) headers.authorization = `Bearer ${config.token}`;
  return headers;
}
