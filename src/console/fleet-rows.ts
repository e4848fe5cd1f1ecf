/** The fleet's rows: every run of da_runs as its summary says it, with the lease it is held under. */
import type { Database } from '../store/pg/pool.ts';
import { type ConsoleRow, FLEET_KEY, KEY_SEPARATOR } from './console-row.ts';

export async function fleetRows(pool: Database): Promise<ConsoleRow[]> {
  const { listFleetRuns } = await import('../fleet/fleet-summary.ts');
  return (await listFleetRuns(pool)).map(({ fleet, ...summary }) => ({
    ...summary,
    key: [FLEET_KEY, summary.runId].join(KEY_SEPARATOR),
    worker: fleet.leaseActive ? fleet.worker : null,
    leaseEpoch: fleet.leaseEpoch,
  }));
}
