/**
 * The lease of a run's lock, apart from the lock (lock-file.ts): a store is opened, and its
 * lease checked, by readers that never take the lock.
 */

/** How long a lock from another host may go without a heartbeat before it is taken over. */
export const DEFAULT_LOCK_LEASE_MS = 30_000;
/** The shortest and longest lease accepted (DURABLE_AGENT_LOCK_LEASE_MS). */
export const LOCK_LEASE_RANGE_MS = { min: 500, max: 86_400_000 } as const;
