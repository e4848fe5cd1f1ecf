/**
 * The statements of the tenants' quotas and rate limits (src/fleet/tenant-limits.ts says what they
 * mean): a tenant's spend this month against its quotas, and a slot in its window of model calls.
 * The spend is charged by the append statement itself (append-statement.ts), never here: a reply's
 * record and its charge commit together or not at all.
 */
import type { Database } from './pool.ts';

/** The month a charge goes to: the calendar month, in UTC, by the database's clock. */
export const SPEND_MONTH = `date_trunc('month', now() AT TIME ZONE 'UTC')::date`;

export interface TenantSpendRow {
  /** The month, as 'YYYY-MM' (UTC). */
  month: string;
  max_cost_usd_month: string | null;
  max_tokens_month: string | null;
  /** What the tenant spent this month (numeric, as text: exact). */
  cost_usd: string;
  tokens: string;
}

/** A tenant's quotas as they are now, and what it spent this month, in one statement. */
export async function readTenantSpend(db: Database, tenant: string): Promise<TenantSpendRow> {
  const { rows } = await db.query<TenantSpendRow>(
    `SELECT to_char(m.month, 'YYYY-MM') AS month, t.max_cost_usd_month, t.max_tokens_month,
            coalesce(s.cost_usd, 0)::text AS cost_usd, coalesce(s.tokens, 0)::text AS tokens
       FROM (SELECT ${SPEND_MONTH} AS month) AS m
       LEFT JOIN da_tenants t ON t.name = $1
       LEFT JOIN da_tenant_spend s ON s.tenant = $1 AND s.month = m.month`,
    [tenant],
  );
  return rows[0]!;
}

/** Every tenant's spend in a month ('YYYY-MM'; default this one), by name. */
export async function readSpendOfMonth(db: Database, month?: string): Promise<{ tenant: string; month: string; cost_usd: string; tokens: string; replies: string }[]> {
  const { rows } = await db.query<{ tenant: string; month: string; cost_usd: string; tokens: string; replies: string }>(
    `SELECT tenant, to_char(month, 'YYYY-MM') AS month, cost_usd::text AS cost_usd, tokens::text AS tokens, replies::text AS replies
       FROM da_tenant_spend WHERE month = coalesce(to_date($1, 'YYYY-MM'), ${SPEND_MONTH}) ORDER BY tenant`,
    [month ?? null],
  );
  return rows;
}

export interface WindowSlot {
  /** Whether the call may go now (its request counted in the window). */
  taken: boolean;
  /** When it may not: milliseconds until the window ends, by the database's clock. */
  waitMs: number;
  /** The window's start, epoch milliseconds by the database's clock: what the slot was counted in. */
  windowStart: number;
}

/**
 * Takes a slot for one model call in the tenant's current window (fixed windows of `windowMs`,
 * aligned on the epoch, shared by every worker): counted and granted while the window's calls are
 * under max_requests_minute and its tokens under max_tokens_minute, else refused with the time
 * left in the window. One statement, so atomic; it holds nothing once it returns. A tenant
 * without rate limits is always granted (and counted).
 */
export async function takeWindowSlot(db: Database, tenant: string, windowMs: number): Promise<WindowSlot> {
  const { rows } = await db.query<{ taken: boolean; wait_ms: number; window_start: number }>({
    name: 'da_tenant_window_take_v2',
    text: `WITH lim AS (
             SELECT max_requests_minute AS requests, max_tokens_minute AS tokens FROM da_tenants WHERE name = $1
           ), w AS (
             SELECT to_timestamp(floor(extract(epoch FROM clock_timestamp()) * 1000 / $2) * $2 / 1000.0) AS start
           ), taken AS (
             INSERT INTO da_tenant_window AS x (tenant, window_start, requests, tokens)
             SELECT $1, w.start, 1, 0 FROM w
             ON CONFLICT (tenant) DO UPDATE SET
               requests = CASE WHEN x.window_start < excluded.window_start THEN 1 ELSE x.requests + 1 END,
               tokens = CASE WHEN x.window_start < excluded.window_start THEN 0 ELSE x.tokens END,
               window_start = greatest(x.window_start, excluded.window_start)
             WHERE x.window_start < excluded.window_start
                OR ((SELECT requests FROM lim) IS NULL OR x.requests < (SELECT requests FROM lim))
               AND ((SELECT tokens FROM lim) IS NULL OR x.tokens < (SELECT tokens FROM lim))
             RETURNING 1
           )
           SELECT EXISTS (SELECT 1 FROM taken) AS taken,
                  (extract(epoch FROM (SELECT start FROM w)) * 1000 + $2 - extract(epoch FROM clock_timestamp()) * 1000)::float8 AS wait_ms,
                  (extract(epoch FROM (SELECT start FROM w)) * 1000)::float8 AS window_start`,
    values: [tenant, windowMs],
  });
  const row = rows[0]!;
  return { taken: row.taken, waitMs: Math.max(0, row.wait_ms), windowStart: row.window_start };
}
