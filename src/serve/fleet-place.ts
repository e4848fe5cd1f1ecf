/**
 * The runs of a fleet (PostgreSQL): a start is submitRun (idempotent by the run's id), the
 * workers drive the runs, and what a person decides goes to the run's inboxes in the database,
 * where the worker that takes it up next reads it. Serve drives nothing itself here; the model's
 * text as it streams comes from the worker that drives the run, by NOTIFY (text-stream.ts).
 */
import { FLEET_KEY, KEY_SEPARATOR } from '../console/console-row.ts';
import { RunSources } from '../console/run-sources.ts';
import { consoleKeys } from '../console/sealed-tasks.ts';
import { listFleetRuns } from '../fleet/fleet-summary.ts';
import { submitRun, UnknownAgentError } from '../fleet/submit-run.ts';
import { ChannelSignal } from '../store/pg/channel-signal.ts';
import { openDatabaseStore } from '../store/pg/open-database-store.ts';
import { TEXT_CHANNEL, textPieceOf } from '../store/pg/text-stream.ts';
import type { Database } from '../store/pg/pool.ts';
import { FLEET_POLL_MS } from './run-event-tail.ts';
import { pageOf } from './run-pages.ts';
import type { FoundRun, PageAsked, RunPlace, RunsPage, StartAsked } from './run-place.ts';
import { ServeUnknownAgentError } from './serve-errors.ts';
import type { KeysGiven } from '../seal/keys.ts';

export class FleetPlace implements RunPlace {
  readonly source = 'fleet';
  readonly pollMs = FLEET_POLL_MS;
  private readonly sources: RunSources;
  private texts: ChannelSignal | null = null;
  private readonly listeners = new Map<string, Set<(text: string) => void>>();

  constructor(
    private readonly pool: Database,
    /** The master keys: runs started here are submitted sealed with them, and sealed tasks open with them. */
    private readonly keys: KeysGiven = consoleKeys,
  ) {
    this.sources = new RunSources([], pool);
  }

  async find(runId: string): Promise<FoundRun | null> {
    // A sealed task opens with the server's keys, as its list's rows do (the console's), else says the key it needs.
    const [summary] = await listFleetRuns(this.pool, { id: runId }, this.keys);
    if (!summary) return null;
    const store = openDatabaseStore(this.pool, runId, { keys: this.keys });
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
      const submitted = await submitRun(this.pool, { agent: asked.agent, task: asked.task, runId: asked.runId, tenant: asked.tenant, keys: this.keys });
      return { created: submitted.created };
    } catch (error) {
      if (error instanceof UnknownAgentError) throw new ServeUnknownAgentError(asked.agent, null);
      throw error;
    }
  }

  steered(): void {}

  async followText(runId: string, listener: (text: string) => void): Promise<() => void> {
    let set = this.listeners.get(runId);
    if (!set) this.listeners.set(runId, (set = new Set()));
    set.add(listener);
    // One LISTEN for every follower, opened with the first.
    this.texts ??= new ChannelSignal(this.pool, TEXT_CHANNEL, (payload) => this.heard(payload), () => {}, { what: 'model text', signalOnListen: false });
    await this.texts.ensure();
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(runId) === set) this.listeners.delete(runId);
    };
  }

  async close(): Promise<void> {
    await this.texts?.stop();
    await this.sources.close();
  }

  private heard(payload: string | undefined): void {
    const piece = textPieceOf(payload);
    if (piece) for (const listener of this.listeners.get(piece.runId) ?? []) listener(piece.text);
  }
}
