/**
 * One JSON request to the API: the token sent, an error answer read into an ApiError, and a
 * request that may be repeated tried again (with backoff) when the API cannot be reached.
 */
import type { ApiErrorBody } from './api-types.ts';
import { backoffDelay, sleep as realSleep } from './backoff.ts';
import { ApiError, ApiUnreachableError, codeOfStatus } from './client-errors.ts';
import { baseHeaders, type ClientConfig } from './client-options.ts';

/** Statuses that say "not now" rather than "no": a repeatable request is tried again. */
export const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

export const DEFAULT_MAX_ATTEMPTS = 3;

export interface JsonRequest {
  method: 'GET' | 'POST';
  /** The path under the base URL, with its query. */
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Whether sending it twice does no harm (a read; a start that carries an idempotency key). */
  repeatable: boolean;
  signal?: AbortSignal;
}

export async function requestJson<T>(config: ClientConfig, request: JsonRequest): Promise<T> {
  const label = `${request.method} ${request.path}`;
  const maxAttempts = request.repeatable ? Math.max(1, config.retry.maxAttempts ?? DEFAULT_MAX_ATTEMPTS) : 1;
  const sleep = config.retry.sleep ?? realSleep;
  const headers = { ...baseHeaders(config, 'application/json'), ...request.headers };
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  for (let attempt = 1; ; attempt += 1) {
    let response: Response;
    try {
      response = await config.fetch(config.base + request.path, {
        method: request.method,
        headers,
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        signal: request.signal,
      });
    } catch (error) {
      if (request.signal?.aborted) throw error;
      if (attempt >= maxAttempts) throw new ApiUnreachableError(label, attempt, { cause: error });
      await sleep(backoffDelay(attempt, config.retry), request.signal);
      continue;
    }
    if (response.ok) return readJson<T>(response, label);
    if (RETRY_STATUSES.has(response.status) && attempt < maxAttempts) {
      await response.body?.cancel().catch(() => undefined);
      await sleep(backoffDelay(attempt, config.retry), request.signal);
      continue;
    }
    throw await errorOf(response, label);
  }
}

async function readJson<T>(response: Response, label: string): Promise<T> {
  const text = await response.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ApiError(response.status, 'unreadable', `the answer is not JSON: ${JSON.stringify(text.slice(0, 120))}`, label);
  }
}

/** The ApiError of an error answer: the server's code and message, or the status's when its body is not the API's. */
export async function errorOf(response: Response, label: string): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  try {
    const body = JSON.parse(text) as Partial<ApiErrorBody>;
    if (body.error && typeof body.error.code === 'string' && typeof body.error.message === 'string') {
      return new ApiError(response.status, body.error.code, body.error.message, label);
    }
  } catch {
    // Not the API's error body (a proxy's page, say): the status speaks instead.
  }
  const said = text.trim() ? `: ${JSON.stringify(text.trim().slice(0, 120))}` : '';
  return new ApiError(response.status, codeOfStatus(response.status), `${response.statusText || 'HTTP error'}${said}`, label);
}
