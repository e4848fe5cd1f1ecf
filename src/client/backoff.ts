/**
 * How long to wait before the next try: exponential, capped, with jitter so that many clients
 * cut off by one restart do not all come back in the same instant.
 */

/** Waits `ms`; ends early, without an error, when the signal aborts (the caller looks at the signal). */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface BackoffOptions {
  /** The wait before the first retry, in ms. Default: 500. */
  initialDelayMs?: number | undefined;
  /** The longest wait, in ms. Default: 30000. */
  maxDelayMs?: number | undefined;
  /** A number in [0, 1), as Math.random gives (tests pass their own). */
  random?: (() => number) | undefined;
}

export const DEFAULT_INITIAL_DELAY_MS = 500;
export const DEFAULT_MAX_DELAY_MS = 30_000;

/**
 * The wait before retry number `attempt` (1 for the first): the capped exponential step, of which
 * the upper half is jitter, so a wait never drops below half the step.
 */
export function backoffDelay(attempt: number, options: BackoffOptions = {}): number {
  const initial = options.initialDelayMs ?? DEFAULT_INITIAL_DELAY_MS;
  const max = options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
  const step = Math.min(max, initial * 2 ** Math.max(0, attempt - 1));
  const random = options.random ?? Math.random;
  return Math.round(step / 2 + (random() * step) / 2);
}

export const sleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
