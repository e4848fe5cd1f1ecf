/** Artificial step delays, so a person (or a kill test) can catch a run in the middle of a step. */
export interface Pace {
  /** Milliseconds every step takes. */
  paceMs?: number | undefined;
  /** Up to this many milliseconds more, at random, per step. */
  jitterMs?: number | undefined;
}

/** With `signal` (a tool's ctx.signal): the delay ends at once when it aborts, rejecting with its reason. */
export function stepDelay(pace: Pace, signal?: AbortSignal): Promise<void> {
  const ms = (pace.paceMs ?? 0) + (pace.jitterMs ? Math.random() * pace.jitterMs : 0);
  if (signal?.aborted) return Promise.reject(signal.reason);
  if (!(ms > 0)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
