/**
 * The tenants of a fleet: each tenant's share of the workers (its weight: a claim gives a tenant
 * runs in proportion to it, among the tenants with work) and the most of its runs driven at once
 * across the fleet, both set and changed at run time. A tenant never set has weight 1 and no limit.
 */
import { checkTenant } from '../core/tenant.ts';
import type { Database } from '../store/pg/pool.ts';
import { readTenants, upsertTenant } from '../store/pg/tenants.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

export const MAX_WEIGHT = 1_000;
export const MAX_RUNNING = 100_000;

export interface TenantSettings {
  /** Its share of the fleet's claims, from 1 (the default) to 1000. */
  weight?: number | undefined;
  /** The most of its runs driven at once across the fleet; null: no limit (the default). */
  maxRunning?: number | null | undefined;
}

export interface Tenant {
  name: string;
  weight: number;
  maxRunning: number | null;
  /** Its runs not finished that no worker drives now (queued, waiting, paused or stopped). */
  queued: number;
  /** Its runs a worker drives now (under a live lease). */
  driving: number;
}

export class TenantSettingsError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'TenantSettingsError';
  constructor(readonly problem: string) {
    super(`The tenant's settings cannot be set: ${problem}. Nothing was changed.`);
  }
}

/** Sets a tenant's weight or limit (what is not given stays as it was); takes hold at the workers' next claims. */
export async function setTenant(pool: Database, name: string, settings: TenantSettings): Promise<Tenant> {
  const tenant = checkTenant(name)!;
  const { weight, maxRunning } = settings;
  if (weight !== undefined && (!Number.isSafeInteger(weight) || weight < 1 || weight > MAX_WEIGHT)) throw new TenantSettingsError(`weight must be a whole number from 1 to ${MAX_WEIGHT}, not ${String(weight)}`);
  if (maxRunning !== undefined && maxRunning !== null && (!Number.isSafeInteger(maxRunning) || maxRunning < 1 || maxRunning > MAX_RUNNING)) {
    throw new TenantSettingsError(`maxRunning must be a whole number from 1 to ${MAX_RUNNING} (or null for no limit), not ${String(maxRunning)}`);
  }
  await upsertTenant(pool, tenant, { weight, maxRunning });
  return (await listTenants(pool)).find((one) => one.name === tenant)!;
}

/** Every tenant set or with runs not finished, by name. */
export async function listTenants(pool: Database): Promise<Tenant[]> {
  return (await readTenants(pool)).map((row) => ({ name: row.name, weight: row.weight, maxRunning: row.max_running, queued: Number(row.queued), driving: Number(row.driving) }));
}
