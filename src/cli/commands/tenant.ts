/** `durable-agent tenant set|list`: the fleet's tenants (fleet/tenants.ts). */
import { listTenants, setTenant, type Tenant } from '../../fleet/tenants.ts';
import { openDatabase } from '../../store/pg/index.ts';
import { databaseUrlOf } from '../../store/pg/pool.ts';
import { formatUsd } from '../../budget/budget-words.ts';
import { tableLines } from '../../words/format.ts';
import type { TenantArgs } from '../args.ts';
import { EXIT } from '../exit-codes.ts';
import type { Writers } from '../plain-reporter.ts';

export async function tenantCommand(args: TenantArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  const url = databaseUrlOf(args.databaseUrl, env, `tenant ${args.action}`);
  const pool = await openDatabase(url, 2);
  try {
    if (args.action === 'set') {
      const { weight, maxRunning, maxCostUsdMonth, maxTokensMonth, maxRequestsMinute, maxTokensMinute } = args;
      const tenant = await setTenant(pool, args.name, { weight, maxRunning, maxCostUsdMonth, maxTokensMonth, maxRequestsMinute, maxTokensMinute, by: env.USER || 'cli' });
      writers.out(`${tenant.name}: weight ${tenant.weight}, ${tenant.maxRunning === null ? 'no limit of runs driven at once' : `at most ${tenant.maxRunning} runs driven at once`}; the workers' next claims follow it`);
      writers.out(`  ${quotaWords(tenant)}; ${rateWords(tenant)} (the workers follow it within a second)`);
      if (tenant.resumed.length > 0) writers.out(`  ${tenant.resumed.length} run(s) stopped at its quota queued again (each checks it before its next call): ${tenant.resumed.join(', ')}`);
      return EXIT.done;
    }
    const tenants = await listTenants(pool);
    if (args.json) writers.out(JSON.stringify(tenants, null, 2));
    else for (const line of tableLines(['TENANT', 'WEIGHT', 'MAX RUNNING', 'QUEUED', 'DRIVEN', 'SPENT THIS MONTH', 'QUOTA A MONTH', 'RATE A MINUTE'], tenants.map(rowOf))) writers.out(line);
    return EXIT.done;
  } finally {
    await pool.end();
  }
}

function rowOf(tenant: Tenant): string[] {
  const spent = `${formatUsd(tenant.costUsdMonth)}, ${tenant.tokensMonth.toLocaleString('en-US')} tokens`;
  const quota = [tenant.maxCostUsdMonth === null ? null : formatUsd(tenant.maxCostUsdMonth), tenant.maxTokensMonth === null ? null : `${tenant.maxTokensMonth.toLocaleString('en-US')} tokens`].filter((part) => part !== null).join(', ') || '-';
  const rate = [tenant.maxRequestsMinute === null ? null : `${tenant.maxRequestsMinute} calls`, tenant.maxTokensMinute === null ? null : `${tenant.maxTokensMinute.toLocaleString('en-US')} tokens`].filter((part) => part !== null).join(', ') || '-';
  return [tenant.name, String(tenant.weight), tenant.maxRunning === null ? '-' : String(tenant.maxRunning), String(tenant.queued), String(tenant.driving), spent, quota, rate];
}

function quotaWords(tenant: Tenant): string {
  const parts = [tenant.maxCostUsdMonth === null ? null : `${formatUsd(tenant.maxCostUsdMonth)} at list prices`, tenant.maxTokensMonth === null ? null : `${tenant.maxTokensMonth.toLocaleString('en-US')} tokens`].filter((part) => part !== null);
  const spent = `spent this month (UTC): ${formatUsd(tenant.costUsdMonth)}, ${tenant.tokensMonth.toLocaleString('en-US')} tokens`;
  return parts.length === 0 ? `no monthly quota (${spent})` : `a monthly quota of ${parts.join(' and ')} (${spent})`;
}

function rateWords(tenant: Tenant): string {
  const parts = [tenant.maxRequestsMinute === null ? null : `${tenant.maxRequestsMinute} model calls`, tenant.maxTokensMinute === null ? null : `${tenant.maxTokensMinute.toLocaleString('en-US')} tokens`].filter((part) => part !== null);
  return parts.length === 0 ? 'no rate limit' : `at most ${parts.join(' and ')} a minute`;
}
