/**
 * Writing a forked run into any store, whole or not at all. A store that does it in one step of
 * its own (createFork: the fleet's transaction) does; any other is written with createWith under
 * its lock, after a look that no run is there (a start that raced the fork holds the lock).
 */
import type { ForkedRun, RunStore } from './store.ts';

/** 'exists': a run is stored there already (nothing written); 'cannot': the store takes no forked run. */
export async function createForked(store: RunStore, fork: ForkedRun): Promise<'created' | 'exists' | 'cannot'> {
  if (store.createFork) return store.createFork(fork);
  if (!store.createWith) return 'cannot';
  const lock = await store.lock();
  try {
    if (await store.exists()) return 'exists';
    await store.createWith(fork.header, fork.records);
    return 'created';
  } finally {
    await lock.release();
  }
}
