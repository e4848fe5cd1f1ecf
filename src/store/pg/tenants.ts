/** The tenants' shares, limits and quotas in da_tenants, and what each has in the queue and spent (src/fleet/tenants.ts says what they mean). */
import { forgetTenantLimits } from './leases.ts';
import type { Database } from './pool.ts';
import { SPEND_MONTH } from './tenant-limits.ts';

export interface TenantRow {
  name: string;
  weight: number;
  max_running: number | null;
  /** numeric, as text (exact). */
  max_cost_usd_month: string | null;
  max_tokens_month: string | null;
  max_requests_minute: number | null;
  max_tokens_minute: string | null;
  queued: string;
  driving: string;
  /** Spent this month (UTC), numeric as text. */
  cost_usd_month: string;
  tokens_month: string;
}

/** A limit that may be taken away: undefined leaves it as it is, null takes it away. */
type Settable<T> = T | null | undefined;

export interface TenantUpsert {
  weight?: number | undefined;
  maxRunning?: Settable<number>;
  maxCostUsdMonth?: Settable<number>;
  maxTokensMonth?: Settable<number>;
  maxRequestsMinute?: Settable<number>;
  maxTokensMinute?: Settable<number>;
}

/** Sets what is given of a tenant's share, limits and quotas (a tenant not set yet gets the defaults for the rest). */
export async function upsertTenant(db: Database, name: string, set: TenantUpsert): Promise<void> {
  const settable = [set.maxRunning, set.maxCostUsdMonth, set.maxTokensMonth, set.maxRequestsMinute, set.maxTokensMinute];
  await db.query(
    `INSERT INTO da_tenants (name, weight, max_running, max_cost_usd_month, max_tokens_month, max_requests_minute, max_tokens_minute)
     VALUES ($1, coalesce($2, 1), $3, $4, $5, $6, $7)
     ON CONFLICT (name) DO UPDATE SET weight = coalesce($2, da_tenants.weight),
       max_running = CASE WHEN $8 THEN $3 ELSE da_tenants.max_running END,
       max_cost_usd_month = CASE WHEN $9 THEN $4::numeric ELSE da_tenants.max_cost_usd_month END,
       max_tokens_month = CASE WHEN $10 THEN $5::bigint ELSE da_tenants.max_tokens_month END,
       max_requests_minute = CASE WHEN $11 THEN $6::integer ELSE da_tenants.max_requests_minute END,
       max_tokens_minute = CASE WHEN $12 THEN $7::bigint ELSE da_tenants.max_tokens_minute END,
       updated_at = now()`,
    [name, set.weight ?? null, ...settable.map((value) => value ?? null), ...settable.map((value) => value !== undefined)],
  );
  forgetTenantLimits(db);
}

/** Every tenant that is set or has runs not finished, by name, with its runs queued and driven now and what it spent this month. */
export async function readTenants(db: Database): Promise<TenantRow[]> {
  const { rows } = await db.query<TenantRow>(
    `WITH runs AS (
       SELECT tenant, count(*) FILTER (WHERE lease_expires_at IS NULL OR lease_expires_at <= now()) AS queued,
              count(*) FILTER (WHERE lease_expires_at > now()) AS driving
         FROM da_runs WHERE NOT finished GROUP BY tenant
     )
     SELECT coalesce(t.name, r.tenant) AS name, coalesce(t.weight, 1) AS weight, t.max_running,
            t.max_cost_usd_month::text AS max_cost_usd_month, t.max_tokens_month::text AS max_tokens_month,
            t.max_requests_minute, t.max_tokens_minute::text AS max_tokens_minute,
            coalesce(r.queued, 0) AS queued, coalesce(r.driving, 0) AS driving,
            coalesce(s.cost_usd, 0)::text AS cost_usd_month, coalesce(s.tokens, 0)::text AS tokens_month
       FROM da_tenants t FULL JOIN runs r ON r.tenant = t.name
       LEFT JOIN da_tenant_spend s ON s.tenant = coalesce(t.name, r.tenant) AND s.month = ${SPEND_MONTH}
      ORDER BY 1`,
  );
  return rows;
}

/** The runs of a tenant stopped at a budget (some may be stopped at its quota), with their record counts. */
export async function readBudgetStoppedRuns(db: Database, tenant: string): Promise<{ id: string; records: number }[]> {
  const { rows } = await db.query<{ id: string; records: number }>(
    `SELECT id, records FROM da_runs WHERE tenant = $1 AND NOT finished AND state = 'stoppedAtBudget' ORDER BY created_at, id`,
    [tenant],
  );
  return rows;
}
