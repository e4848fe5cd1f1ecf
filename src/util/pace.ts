/** Artificial step delays, so a person (or a kill test) can catch a run in the middle of a step. */
export interface Pace {
  /** Milliseconds every step takes. */
  paceMs?: number | undefined;
  /** Up to this many milliseconds more, at random, per step. */
  jitterMs?: number | undefined;
}

export function stepDelay(pace: Pace): Promise<void> {
  const ms = (pace.paceMs ?? 0) + (pace.jitterMs ? Math.random() * pace.jitterMs : 0);
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}
