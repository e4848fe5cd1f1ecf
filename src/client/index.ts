/**
 * durable-agent/client: a typed client of the HTTP API `durable-agent serve` answers, for Node 20
 * and the browser alike. It needs only fetch, ReadableStream, TextDecoder, AbortController and
 * setTimeout, and imports nothing of Node or of the runtime: a browser bundle of it is small.
 *
 * @module durable-agent/client
 */
export { createClient } from './create-client.ts';
export type { CallOptions, DurableAgentClient, ListRunsFilter, StartRunOptions } from './create-client.ts';
export type { ClientOptions, FetchLike, RetryOptions } from './client-options.ts';
export type { FollowOptions, TextDeltaEvent } from './follow-run.ts';
export type { BackoffOptions, Sleep } from './backoff.ts';
export { ApiError, ApiUnreachableError } from './client-errors.ts';
export type * from './api-types.ts';
