/**
 * Letting a tenant's runs stopped at its quota go on, once the quota was set again: each gets a
 * raise request (da_controls, kind 'raise', `tenantQuota`), so that a worker claims it, lifts the
 * stop (the machine's REOPEN) and checks the quota again before the call it stopped before. A run
 * still over the quota stops again there, having called nothing.
 */
import { isStoppedAtLimit } from '../../machines/agent-loop.types.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import { snapshotContextOf } from '../store/journal/journal-codec.ts';
import { openDatabaseStore } from '../store/pg/open-database-store.ts';
import type { Database } from '../store/pg/pool.ts';
import { insertRaiseRequest } from '../store/pg/raises.ts';
import { readBudgetStoppedRuns } from '../store/pg/tenants.ts';
import type { RaiseRequest } from './raise-errors.ts';

/**
 * The ids of the tenant's runs stopped at its quota that are queued again now (a run that moved
 * on meanwhile, or already raised, is left); with `stoppedBefore` ('YYYY-MM'), only those stopped
 * in an earlier month: at a new month the spend starts from nothing.
 */
export async function liftQuotaStops(pool: Database, tenant: string, by: string, stoppedBefore?: string): Promise<string[]> {
  const lifted: string[] = [];
  for (const { id } of await readBudgetStoppedRuns(pool, tenant)) {
    const store = openDatabaseStore(pool, id);
    const loaded = await store.load({ fromLastSnapshot: true });
    const view = foldJournal(store.location, loaded);
    const context = snapshotContextOf(view);
    if (!isStoppedAtLimit(view.state) || context.budgetStop?.tenant !== tenant) continue;
    if (stoppedBefore !== undefined && !(typeof context.budgetStop.month === 'string' && context.budgetStop.month < stoppedBefore)) continue;
    const request: RaiseRequest = { kind: 'raise', by, at: Date.now(), tenantQuota: true };
    const inserted = await insertRaiseRequest(pool, id, loaded.records.at(-1)!.record.seq + 1, view.state, request);
    if (inserted.outcome === 'inserted') lifted.push(id);
  }
  return lifted;
}
