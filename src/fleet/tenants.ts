/**
 * The tenants of a fleet: each tenant's share of the workers (its weight: a claim gives a tenant
 * runs in proportion to it, among the tenants with work) and the most of its runs driven at once
 * across the fleet, both set and changed at run time; its monthly quotas (cost at list prices,
 * tokens) and its rate limits of model calls (src/fleet/tenant-limits.ts). A tenant never set has
 * weight 1 and no limit.
 */
import { MAX_COST_USD_RANGE, MAX_TOTAL_TOKENS_RANGE } from '../budget/budget.ts';
import { checkTenant } from '../core/tenant.ts';
import type { Database } from '../store/pg/pool.ts';
import { readTenants, upsertTenant } from '../store/pg/tenants.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';
import { liftQuotaStops } from './tenant-quota-stops.ts';

export const MAX_WEIGHT = 1_000;
export const MAX_RUNNING = 100_000;
/** The most model calls a minute a rate limit may allow. */
export const MAX_REQUESTS_MINUTE = 1_000_000;

export interface TenantSettings {
  /** Its share of the fleet's claims, from 1 (the default) to 1000. */
  weight?: number | undefined;
  /** The most of its runs driven at once across the fleet; null: no limit (the default). */
  maxRunning?: number | null | undefined;
  /** US dollars at list prices its runs may spend in a calendar month (UTC); null: no quota (the default). */
  maxCostUsdMonth?: number | null | undefined;
  /** Tokens (input, output, cache reads and writes) its runs may use in a calendar month (UTC); null: no quota. */
  maxTokensMonth?: number | null | undefined;
  /** The most model calls its runs make in a minute, across the fleet; null: no limit. */
  maxRequestsMinute?: number | null | undefined;
  /** The most tokens its runs' replies use in a minute, across the fleet; null: no limit. */
  maxTokensMinute?: number | null | undefined;
  /** Who sets it, as the runs it lets go on again say (default 'api'). */
  by?: string | undefined;
}

export interface Tenant {
  name: string;
  weight: number;
  maxRunning: number | null;
  maxCostUsdMonth: number | null;
  maxTokensMonth: number | null;
  maxRequestsMinute: number | null;
  maxTokensMinute: number | null;
  /** Its runs not finished that no worker drives now (queued, waiting, paused or stopped). */
  queued: number;
  /** Its runs a worker drives now (under a live lease). */
  driving: number;
  /** What its runs' replies cost this calendar month (UTC), at list prices. */
  costUsdMonth: number;
  /** The tokens its runs' replies used this calendar month (UTC). */
  tokensMonth: number;
}

/** What a set did besides the settings: the runs stopped at a quota it lets go on. */
export interface TenantSet extends Tenant {
  /** Runs stopped at this tenant's quota, queued again to check it before their next call. */
  resumed: string[];
}

export class TenantSettingsError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'TenantSettingsError';
  constructor(readonly problem: string) {
    super(`The tenant's settings cannot be set: ${problem}. Nothing was changed.`);
  }
}

function checkWhole(name: string, value: number | null | undefined, min: number, max: number): void {
  if (value === undefined || value === null) return;
  if (!Number.isSafeInteger(value) || value < min || value > max) throw new TenantSettingsError(`${name} must be a whole number from ${min} to ${max} (or null for no limit), not ${String(value)}`);
}

/**
 * Sets a tenant's weight, limits or quotas (what is not given stays as it was); takes hold at the
 * workers' next claims and model calls. Setting a quota (raised, taken away or given again once
 * the month has turned) lets the tenant's runs stopped at its quota go on: each is queued again
 * and checks the quota before its next call.
 */
export async function setTenant(pool: Database, name: string, settings: TenantSettings): Promise<TenantSet> {
  const tenant = checkTenant(name)!;
  const { weight, maxRunning, maxCostUsdMonth, maxTokensMonth, maxRequestsMinute, maxTokensMinute } = settings;
  checkWhole('weight', weight === undefined ? undefined : weight, 1, MAX_WEIGHT);
  if (weight === null) throw new TenantSettingsError('weight cannot be taken away (1 is the default)');
  checkWhole('maxRunning', maxRunning, 1, MAX_RUNNING);
  checkWhole('maxTokensMonth', maxTokensMonth, MAX_TOTAL_TOKENS_RANGE.min, MAX_TOTAL_TOKENS_RANGE.max);
  checkWhole('maxRequestsMinute', maxRequestsMinute, 1, MAX_REQUESTS_MINUTE);
  checkWhole('maxTokensMinute', maxTokensMinute, MAX_TOTAL_TOKENS_RANGE.min, MAX_TOTAL_TOKENS_RANGE.max);
  if (maxCostUsdMonth !== undefined && maxCostUsdMonth !== null) {
    const { min, max } = MAX_COST_USD_RANGE;
    if (!(typeof maxCostUsdMonth === 'number' && maxCostUsdMonth >= min && maxCostUsdMonth <= max)) {
      throw new TenantSettingsError(`maxCostUsdMonth must be US dollars from ${min} to ${max} (or null for no quota), not ${String(maxCostUsdMonth)}`);
    }
  }
  await upsertTenant(pool, tenant, { weight, maxRunning, maxCostUsdMonth, maxTokensMonth, maxRequestsMinute, maxTokensMinute });
  const quotaSet = maxCostUsdMonth !== undefined || maxTokensMonth !== undefined;
  const resumed = quotaSet ? await liftQuotaStops(pool, tenant, settings.by ?? 'api') : [];
  return { ...(await listTenants(pool)).find((one) => one.name === tenant)!, resumed };
}

/** Every tenant set or with runs not finished, by name. */
export async function listTenants(pool: Database): Promise<Tenant[]> {
  const orNull = (value: string | number | null) => (value === null ? null : Number(value));
  return (await readTenants(pool)).map((row) => ({
    name: row.name,
    weight: row.weight,
    maxRunning: row.max_running,
    maxCostUsdMonth: orNull(row.max_cost_usd_month),
    maxTokensMonth: orNull(row.max_tokens_month),
    maxRequestsMinute: row.max_requests_minute,
    maxTokensMinute: orNull(row.max_tokens_minute),
    queued: Number(row.queued),
    driving: Number(row.driving),
    costUsdMonth: Number(row.cost_usd_month),
    tokensMonth: Number(row.tokens_month),
  }));
}
