/**
 * A tenant's quotas and rate limits, as a fleet worker applies them before each model call of the
 * tenant's runs (set with `durable-agent tenant set`, src/fleet/tenants.ts):
 *
 * - Quotas: what the tenant's runs spent this calendar month (UTC), cost at list prices and
 *   tokens, is charged in the statement that writes each reply's usage record
 *   (append-statement.ts), so that a record and its charge commit together and a redo after a
 *   crash charges nothing twice. Before a call, a run whose tenant has spent its quota stops at a
 *   budget (state stoppedAtBudget, the stop naming the tenant, the quota and the month), resumably:
 *   setting the quota again lets it go on (tenant-quota-stops.ts).
 * - Rate limits: before a call, the run takes a slot in the tenant's window of calls
 *   (tenant-limits.ts in src/store/pg: one atomic statement, shared by every worker); in a full
 *   window it waits, holding no connection and no transaction, until the window ends, while the
 *   worker's other runs go on. Tokens are counted from the replies' usage (no estimate before the
 *   call): a window whose tokens reached the limit lets no call start until it ends.
 *
 * Which tenants have any of these is what the worker's look at the fleet says (fleet-look.ts),
 * about once a second: a run of a tenant without them pays nothing more per turn.
 */
import type { AgentEvent, BudgetStop } from '../../machines/agent-loop.types.ts';
import type { Capability, RunSession } from '../core/session.ts';
import type { Database } from '../store/pg/pool.ts';
import { readTenantSpend, type TenantSpendRow, takeWindowSlot } from '../store/pg/tenant-limits.ts';

/** The length of a rate limit's window: a minute (a worker may be given another, for tests). */
export const RATE_WINDOW_MS = 60_000;

/** Which of its limits a tenant has, as a worker last looked. */
export interface TenantRules {
  /** A monthly quota of cost or tokens. */
  quota: boolean;
  /** A most of model calls a minute. */
  requests: boolean;
  /** A most of tokens a minute. */
  tokens: boolean;
}

/** The rules of the tenants that have any, by name (a tenant not in it has none). */
export type TenantRulesOf = (tenant: string) => TenantRules | undefined;

/** What the store charges a run's replies to: the tenant, and whether its window counts tokens; undefined when nothing is charged. */
export function tenantChargeOf(rules: TenantRulesOf, tenant: string): () => { tenant: string; window: boolean } | undefined {
  return () => {
    const rule = rules(tenant);
    return rule && (rule.quota || rule.tokens) ? { tenant, window: rule.tokens } : undefined;
  };
}

/** The quota a tenant's spend has reached this month, as a budget stop, or null. Tokens first: they are exact, a cost is an estimate. */
export function quotaStopOf(tenant: string, row: TenantSpendRow): BudgetStop | null {
  const tokens = Number(row.tokens);
  const cost = Number(row.cost_usd);
  if (row.max_tokens_month !== null && tokens >= Number(row.max_tokens_month)) return { budget: 'tokens', spent: tokens, limit: Number(row.max_tokens_month), tenant, month: row.month };
  if (row.max_cost_usd_month !== null && cost >= Number(row.max_cost_usd_month)) return { budget: 'cost', spent: cost, limit: Number(row.max_cost_usd_month), tenant, month: row.month };
  return null;
}

export interface TenantLimitsOptions {
  pool: Database;
  tenant: string;
  rules: TenantRulesOf;
  windowMs?: number | undefined;
  /** Told each time a call waits for the tenant's window. */
  onWait?: ((waitMs: number) => void) | undefined;
}

/** The tenant's quota and rate limit as a run's hook before each model call (plugged in by a fleet worker). */
export function tenantLimitsCapability(options: TenantLimitsOptions): Capability {
  const { tenant, rules } = options;
  return {
    name: 'tenant-limits',
    beforeModelCall(session) {
      const rule = rules(tenant);
      // A reply held at MAX_TURNS is acted on without a call.
      if (!rule || session.context().heldReply) return null;
      return checkBeforeCall(options, rule, session);
    },
  };
}

async function checkBeforeCall(options: TenantLimitsOptions, rule: TenantRules, session: RunSession): Promise<AgentEvent | null> {
  const { pool, tenant } = options;
  if (rule.quota) {
    const stop = quotaStopOf(tenant, await readTenantSpend(pool, tenant));
    if (stop) return { type: 'BUDGET_REACHED', tenantQuota: stop };
  }
  if (rule.requests || rule.tokens) await waitForSlot(options, session);
  return null;
}

/** Takes a slot in the tenant's window, waiting for the next window as long as it is full; a stop asked of the run ends the wait. */
async function waitForSlot(options: TenantLimitsOptions, session: RunSession): Promise<void> {
  const windowMs = options.windowMs ?? RATE_WINDOW_MS;
  for (;;) {
    session.stopIfAsked();
    const slot = await takeWindowSlot(options.pool, options.tenant, windowMs);
    if (slot.taken) return;
    options.onWait?.(slot.waitMs);
    // A few milliseconds past the window's end, spread so the runs that waited do not all ask at once.
    await pause(slot.waitMs + 5 + Math.floor(Math.random() * 20), session.signal);
  }
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
