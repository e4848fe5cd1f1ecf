/**
 * What a worker looks at now and then besides the queue, in one statement: whether a schedule's
 * tick is due by the database's clock (and the earliest tick), whether some tenant has a
 * most of runs driven at once (then claims take turns: leases.ts), and which tenants have a quota
 * or a rate limit (their runs' model calls check them: src/fleet/tenant-limits.ts).
 */
import type { Database } from './pool.ts';
import { SPEND_MONTH } from './tenant-limits.ts';

export interface FleetLook {
  /** A tick of some schedule not paused is due now. */
  schedulesDue: boolean;
  /** The earliest tick of a schedule not paused; null: none. */
  nextTick: Date | null;
  /** Some tenant has a most of runs driven at once. */
  tenantLimits: boolean;
  /** The tenants with a monthly quota or a rate limit, with which they have. */
  tenantRules: Map<string, { quota: boolean; requests: boolean; tokens: boolean }>;
  /** The calendar month now, 'YYYY-MM' in UTC by the database's clock: the month quotas are charged to. */
  month: string;
}

interface RulesRow {
  name: string;
  quota: boolean;
  requests: boolean;
  tokens: boolean;
}

export async function lookAtFleet(db: Database): Promise<FleetLook> {
  const { rows } = await db.query<{ next: Date | null; due: boolean; limits: boolean; rules: RulesRow[] | null; month: string }>(
    `SELECT min(next_tick_at) AS next, coalesce(min(next_tick_at) <= clock_timestamp(), false) AS due,
            to_char(${SPEND_MONTH}, 'YYYY-MM') AS month,
            EXISTS (SELECT 1 FROM da_tenants WHERE max_running IS NOT NULL) AS limits,
            (SELECT json_agg(json_build_object('name', name,
                      'quota', max_cost_usd_month IS NOT NULL OR max_tokens_month IS NOT NULL,
                      'requests', max_requests_minute IS NOT NULL, 'tokens', max_tokens_minute IS NOT NULL))
               FROM da_tenants
              WHERE max_cost_usd_month IS NOT NULL OR max_tokens_month IS NOT NULL OR max_requests_minute IS NOT NULL OR max_tokens_minute IS NOT NULL) AS rules
       FROM da_schedules WHERE NOT paused`,
  );
  const tenantRules = new Map((rows[0]?.rules ?? []).map(({ name, quota, requests, tokens }) => [name, { quota, requests, tokens }] as const));
  return { schedulesDue: rows[0]?.due === true, nextTick: rows[0]?.next ?? null, tenantLimits: rows[0]?.limits === true, tenantRules, month: rows[0]!.month };
}
