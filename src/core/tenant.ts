/**
 * Whose a run is: a tenant's name, pinned in the run when it starts, shown and filtered by every
 * view of runs, and inherited by the runs a sub-agent call starts. A run started without one is
 * the default tenant's.
 */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

export const DEFAULT_TENANT = 'default';

/** Letters, digits, ".", "_" and "-", beginning with a letter or digit: safe in a file name, a URL and a log line. */
const TENANT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export class TenantError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'TenantError';
  constructor(readonly tenant: unknown) {
    super(`The tenant ${JSON.stringify(tenant)} is not a tenant's name: give 1 to 64 letters, digits, ".", "_" or "-", beginning with a letter or digit. Nothing was started.`);
  }
}

/** The name itself, or TenantError; undefined stays undefined (the default tenant's). */
export function checkTenant(tenant: unknown): string | undefined {
  if (tenant === undefined) return undefined;
  if (typeof tenant !== 'string' || !TENANT.test(tenant)) throw new TenantError(tenant);
  return tenant;
}

/**
 * The tenant a run keeps: the name itself, or undefined for the default tenant's, which is kept as
 * no tenant at all so that a single-tenant store reads and writes as before tenants existed.
 * TenantError for a name that cannot be one.
 */
export function pinnedTenant(tenant: unknown): string | undefined {
  const checked = checkTenant(tenant);
  return checked === DEFAULT_TENANT ? undefined : checked;
}

/** Whose a stored run is: its pinned tenant, else the default one. */
export function tenantOf(pinned: { tenant?: unknown }): string {
  return typeof pinned.tenant === 'string' ? pinned.tenant : DEFAULT_TENANT;
}
