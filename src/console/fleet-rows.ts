/**
 * The fleet's rows for one answer of the console's list: a page of da_runs, newest save first,
 * from a cursor on, read by an index whatever the fleet holds; and the count of each state,
 * the finished runs' read from the counts kept as they finish, the unfinished ones counted.
 */
import { STOPPED_AT_LIMIT_STATES } from '../../machines/agent-loop.types.ts';
import type { AgentStateName } from '../../machines/agent-loop.types.ts';
import type { FleetRunSummary } from '../fleet/fleet-summary.ts';
import type { Database } from '../store/pg/pool.ts';
import type { QueueQuery } from '../fleet/run-queue.ts';
import { consoleKeys, withSealedTasksShown } from './sealed-tasks.ts';
import { categoryOf, type ConsoleRow, FLEET_KEY, KEY_SEPARATOR, newestFirst, RUN_CATEGORIES, type RunCategory } from './console-row.ts';

/** Where a page starts: after this row (its save's time and its key), in the list's order. */
export interface ListCursor {
  updatedAt: number;
  key: string;
}

export interface FleetPageAsked {
  /** Only the rows of this category. */
  category?: RunCategory | undefined;
  after?: ListCursor | undefined;
  /** At most this many; undefined: every row that matches (a search reads them all). */
  limit?: number | undefined;
  /** Only this tenant's runs (filtered in the query). */
  tenant?: string | undefined;
}

/** The rows of the fleet that match, newest save first, from the cursor on. */
export async function fleetRows(pool: Database, asked: FleetPageAsked = {}): Promise<ConsoleRow[]> {
  const { listFleetRuns } = await import('../fleet/fleet-summary.ts');
  const query: QueueQuery = { order: 'newest', ...whereOf(asked.category), ...(asked.tenant === undefined ? {} : { tenant: asked.tenant }) };
  const fleetId = asked.after && fleetIdOf(asked.after.key);
  if (asked.after) {
    // A folder's row as the cursor: the fleet's rows of that millisecond with a greater key come after it.
    query.olderThan = { ms: asked.after.updatedAt, id: fleetId ?? (asked.after.key < FLEET_KEY + KEY_SEPARATOR ? '' : '\uffff') };
  }
  // The unfinished runs are few whatever the fleet holds: their categories are told apart here, by their pauses.
  const filtered = asked.category !== undefined && query.unfinished === true;
  let runs = await listFleetRuns(pool, { ...query, limit: filtered ? undefined : asked.limit }, consoleKeys);
  const last = runs[runs.length - 1];
  if (!filtered && asked.limit !== undefined && last && runs.length === asked.limit) {
    // The database orders a millisecond's saves by their microseconds, the console by their keys:
    // the rest of the last row's millisecond is read too, and the page cut in the console's order.
    const ms = Date.parse(last.fleet.updatedAt);
    const seen = new Set(runs.map((run) => run.runId));
    runs = runs.concat((await listFleetRuns(pool, { ...query, savedFrom: ms }, consoleKeys)).filter((run) => !seen.has(run.runId)));
  }
  const rows = runs.map(rowOf).filter((row) => asked.category === undefined || row.category === asked.category);
  rows.sort(newestFirst);
  // A sealed task is opened with the console's keys, or named with the key it needs: never shown as a sealed string.
  return withSealedTasksShown(pool, asked.limit === undefined ? rows : rows.slice(0, asked.limit));
}

/** How many runs of the fleet are in each category: every tenant's, or one tenant's. */
export async function fleetCounts(pool: Database, tenant?: string): Promise<Record<RunCategory, number>> {
  const { countRunsByState } = await import('../fleet/run-queue.ts');
  const { finished, unfinished } = await countRunsByState(pool, tenant);
  const counts = Object.fromEntries(RUN_CATEGORIES.map((name) => [name, 0])) as Record<RunCategory, number>;
  for (const [state, runs] of finished) counts[categoryOf(state as AgentStateName, false)] += runs;
  for (const { state, paused, runs } of unfinished) counts[categoryOf(state as AgentStateName, paused)] += runs;
  return counts;
}

/** Whose a fleet run is, or null when there is none of that id. */
export async function fleetTenantOf(pool: Database, runId: string): Promise<string | null> {
  const { fleetRunTenant } = await import('../fleet/run-queue.ts');
  return fleetRunTenant(pool, runId);
}

/** The tenants of the fleet that are set or have runs not finished (fleet/tenants.ts). */
export async function fleetTenants(pool: Database): Promise<string[]> {
  const { listTenants } = await import('../fleet/tenants.ts');
  return (await listTenants(pool)).map((tenant) => tenant.name);
}

function rowOf({ fleet, ...summary }: FleetRunSummary): ConsoleRow {
  return { ...summary, key: [FLEET_KEY, summary.runId].join(KEY_SEPARATOR), worker: fleet.leaseActive ? fleet.worker : null, leaseEpoch: fleet.leaseEpoch };
}

function fleetIdOf(key: string): string | null {
  const prefix = FLEET_KEY + KEY_SEPARATOR;
  return key.startsWith(prefix) ? key.slice(prefix.length) : null;
}

/** A category as a condition on da_runs: a finished one by its states, the others among the unfinished runs. */
function whereOf(category: RunCategory | undefined): Pick<QueueQuery, 'states' | 'unfinished'> {
  switch (category) {
    case undefined:
      return {};
    case 'done':
    case 'failed':
    case 'cancelled':
      return { states: [category] };
    case 'stopped':
      return { states: STOPPED_AT_LIMIT_STATES };
    case 'unreadable':
      // A fleet's runs are rows: none is unreadable.
      return { states: [] };
    default:
      return { unfinished: true };
  }
}
