/** The tenants' shares and limits in da_tenants, and what each has in the queue (src/fleet/tenants.ts says what they mean). */
import { forgetTenantLimits } from './leases.ts';
import type { Database } from './pool.ts';

export interface TenantRow {
  name: string;
  weight: number;
  max_running: number | null;
  queued: string;
  driving: string;
}

/** Sets what is given of a tenant's share and limit (a tenant not set yet gets the defaults for the rest). */
export async function upsertTenant(db: Database, name: string, set: { weight?: number | undefined; maxRunning?: number | null | undefined }): Promise<void> {
  await db.query(
    `INSERT INTO da_tenants (name, weight, max_running) VALUES ($1, coalesce($2, 1), $3)
     ON CONFLICT (name) DO UPDATE SET weight = coalesce($2, da_tenants.weight),
       max_running = CASE WHEN $4 THEN $3 ELSE da_tenants.max_running END, updated_at = now()`,
    [name, set.weight ?? null, set.maxRunning ?? null, set.maxRunning !== undefined],
  );
  forgetTenantLimits(db);
}

/** Every tenant that is set or has runs not finished, by name, with its runs queued and driven now. */
export async function readTenants(db: Database): Promise<TenantRow[]> {
  const { rows } = await db.query<TenantRow>(
    `WITH runs AS (
       SELECT tenant, count(*) FILTER (WHERE lease_expires_at IS NULL OR lease_expires_at <= now()) AS queued,
              count(*) FILTER (WHERE lease_expires_at > now()) AS driving
         FROM da_runs WHERE NOT finished GROUP BY tenant
     )
     SELECT coalesce(t.name, r.tenant) AS name, coalesce(t.weight, 1) AS weight, t.max_running,
            coalesce(r.queued, 0) AS queued, coalesce(r.driving, 0) AS driving
       FROM da_tenants t FULL JOIN runs r ON r.tenant = t.name
      ORDER BY 1`,
  );
  return rows;
}
