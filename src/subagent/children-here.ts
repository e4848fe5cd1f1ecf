/**
 * The sub-agent runs this process is driving now, by where each lives. A parent that fails in a
 * program's process (a failed write, a lost lock) leaves the children its calls started running:
 * a tool in flight is left to finish, as a killed process would leave it. A resume of that parent
 * in the same process then reaches such a child's call while the child still runs, under a lock
 * this very process holds: the call waits for that child to end and attaches to it, where it
 * would otherwise record that another process drives the child (and tell the user to kill their
 * own program). A child held by another process is still refused by its lock.
 */

const driving = new Map<string, Promise<unknown>>();

/**
 * Waits until no child this process drives lives at `location`; a stop of the call (`signal`)
 * ends the wait with the signal's reason.
 */
export async function childHereEnded(location: string, signal: AbortSignal): Promise<void> {
  let running = driving.get(location);
  if (running === undefined) return;
  // One listener for the whole wait, removed when it ends: the call's signal outlives it.
  let stop!: () => void;
  const aborted = new Promise<never>((_, reject) => {
    stop = () => reject(signal.reason instanceof Error ? signal.reason : new Error('the call stopped waiting for its sub-agent run'));
  });
  if (signal.aborted) stop();
  else signal.addEventListener('abort', stop, { once: true });
  try {
    for (; running !== undefined; running = driving.get(location)) await Promise.race([running, aborted]);
  } finally {
    signal.removeEventListener('abort', stop);
  }
}

/** Drives a child at `location` (`work`), known to this process until it ends, whichever way it ends. */
export async function drivingChildHere<T>(location: string, work: () => Promise<T>): Promise<T> {
  const running = work();
  // Settled either way: a waiter takes the child's end from the child's own store, not from here.
  const settled = running.then(
    () => undefined,
    () => undefined,
  );
  driving.set(location, settled);
  try {
    return await running;
  } finally {
    if (driving.get(location) === settled) driving.delete(location);
  }
}
