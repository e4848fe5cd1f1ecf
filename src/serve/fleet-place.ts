/**
 * The runs of a fleet (PostgreSQL): a start is submitRun (idempotent by the run's id), the
 * workers drive the runs, and what a person decides goes to the run's inboxes in the database,
 * where the worker that takes it up next reads it. Serve drives nothing itself here, and sees no
 * model text as it streams: a fleet run's events are its records.
 */
import { FLEET_KEY, KEY_SEPARATOR } from '../console/console-row.ts';
import { RunSources } from '../console/run-sources.ts';
import { listFleetRuns } from '../fleet/fleet-summary.ts';
import { submitRun, UnknownAgentError } from '../fleet/submit-run.ts';
import { openDatabaseStore } from '../store/pg/open-database-store.ts';
import type { Database } from '../store/pg/pool.ts';
import { FLEET_POLL_MS } from './run-event-tail.ts';
import { pageOf } from './run-pages.ts';
import type { FoundRun, PageAsked, RunPlace, RunsPage, StartAsked } from './run-place.ts';
import { ServeUnknownAgentError } from './serve-errors.ts';

export class FleetPlace implements RunPlace {
  readonly source = 'fleet';
  readonly pollMs = FLEET_POLL_MS;
  private readonly sources: RunSources;

  constructor(private readonly pool: Database) {
    this.sources = new RunSources([], pool);
  }

  async find(runId: string): Promise<FoundRun | null> {
    const [summary] = await listFleetRuns(this.pool, { id: runId });
    if (!summary) return null;
    const store = openDatabaseStore(this.pool, runId);
    // Queued and not yet taken up: no journal yet, nothing to decide or follow but its row.
    const started = summary.fleet.records > 0;
    const handle = started ? { key: [FLEET_KEY, runId].join(KEY_SEPARATOR), source: 'fleet' as const, store, archivedJournal: null, runDir: null, folder: null } : null;
    return { summary, store, handle };
  }

  list(asked: PageAsked): Promise<RunsPage> {
    return pageOf(this.sources, asked, () => true);
  }

  async start(asked: StartAsked): Promise<{ created: boolean }> {
    try {
      const submitted = await submitRun(this.pool, { agent: asked.agent, task: asked.task, runId: asked.runId, tenant: asked.tenant });
      return { created: submitted.created };
    } catch (error) {
      if (error instanceof UnknownAgentError) throw new ServeUnknownAgentError(asked.agent, null);
      throw error;
    }
  }

  steered(): void {}

  followText(): null {
    return null;
  }

  async close(): Promise<void> {
    await this.sources.close();
  }
}
