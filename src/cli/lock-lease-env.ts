import { DEFAULT_LOCK_LEASE_MS, LOCK_LEASE_RANGE_MS } from '../store/open-store.ts';
import { UsageError } from './usage-error.ts';

/** DURABLE_AGENT_LOCK_LEASE_MS: how long a lock from another host may go without a heartbeat. */
export function lockLeaseOf(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.DURABLE_AGENT_LOCK_LEASE_MS;
  if (raw === undefined || raw === '') return undefined;
  const { min, max } = LOCK_LEASE_RANGE_MS;
  const value = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!(value >= min && value <= max)) {
    throw new UsageError(`DURABLE_AGENT_LOCK_LEASE_MS=${raw} is not a lease: give milliseconds from ${min} to ${max} (default ${DEFAULT_LOCK_LEASE_MS}).`);
  }
  return value;
}
