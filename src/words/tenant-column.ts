/** The tenant column of a table of runs: shown once some run is not the default tenant's, so a fleet of one tenant reads as before. */
import { DEFAULT_TENANT } from '../core/tenant.ts';

/** Adds each run's tenant to its row when some run has one; whether it did. */
export function withTenants(runs: ReadonlyArray<{ tenant: string }>, rows: string[][]): boolean {
  if (!runs.some((run) => run.tenant !== DEFAULT_TENANT)) return false;
  for (const [at, run] of runs.entries()) rows[at]!.push(run.tenant);
  return true;
}
