/** `durable-agent tenant set|list`: the fleet's tenants (fleet/tenants.ts). */
import { listTenants, setTenant, type Tenant } from '../../fleet/tenants.ts';
import { openDatabase } from '../../store/pg/index.ts';
import { databaseUrlOf } from '../../store/pg/pool.ts';
import { tableLines } from '../../words/format.ts';
import type { TenantArgs } from '../args.ts';
import { EXIT } from '../exit-codes.ts';
import type { Writers } from '../plain-reporter.ts';

export async function tenantCommand(args: TenantArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  const url = databaseUrlOf(args.databaseUrl, env, `tenant ${args.action}`);
  const pool = await openDatabase(url, 2);
  try {
    if (args.action === 'set') {
      const tenant = await setTenant(pool, args.name, { weight: args.weight, maxRunning: args.maxRunning });
      writers.out(`${tenant.name}: weight ${tenant.weight}, ${tenant.maxRunning === null ? 'no limit of runs driven at once' : `at most ${tenant.maxRunning} runs driven at once`}; the workers' next claims follow it`);
      return EXIT.done;
    }
    const tenants = await listTenants(pool);
    if (args.json) writers.out(JSON.stringify(tenants, null, 2));
    else for (const line of tableLines(['TENANT', 'WEIGHT', 'MAX RUNNING', 'QUEUED', 'DRIVEN'], tenants.map(rowOf))) writers.out(line);
    return EXIT.done;
  } finally {
    await pool.end();
  }
}

function rowOf(tenant: Tenant): string[] {
  return [tenant.name, String(tenant.weight), tenant.maxRunning === null ? '-' : String(tenant.maxRunning), String(tenant.queued), String(tenant.driving)];
}
