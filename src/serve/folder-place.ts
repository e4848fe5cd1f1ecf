/**
 * The runs by id of one state folder (DIR/.durable-agent/runs/), which serve drives itself, in
 * its own process, with the agents of the module it was given (as `run --agents` drives one):
 * a start is driven until it ends, waiting in the process for a person's decision; when serve
 * starts it takes up the runs of the folder it had started that are unfinished and not waiting
 * for a person; a decision, an answer, a signal or an unpause for a run of serve's that no
 * process drives takes it up too. The run's lock keeps two processes from driving one run: a
 * second serve over the same folder finds it held and leaves the run to the first.
 */
import { randomBytes } from 'node:crypto';
import { FINAL_STATES } from '../../machines/agent-loop.types.ts';
import type { AgentDefinition } from '../agent/agent-definition.ts';
import type { RunEvent as RuntimeEvent } from '../core/run-events.ts';
import { keyOf } from '../console/console-row.ts';
import { DEFAULT_TENANT, tenantOf } from '../core/tenant.ts';
import { RunSources } from '../console/run-sources.ts';
import { RunIdTakenError } from '../runtime/attach-run.ts';
import { resumeRun, startRun } from '../runtime/run-api.ts';
import { summaryOfJournal, unreadableSummary } from '../runtime/run-summary.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import { folderOfState, openRunsFolder } from '../store/open-store.ts';
import type { FolderRunStore, RunsFolder } from '../store/store.ts';
import { pageOf } from './run-pages.ts';
import type { FoundRun, PageAsked, RunPlace, RunsPage, StartAsked } from './run-place.ts';
import { ApiRequestError, ServeUnknownAgentError } from './serve-errors.ts';
import { FOLDER_POLL_MS } from './run-event-tail.ts';
import type { KeysGiven } from '../seal/keys.ts';

/** How long close() waits for the runs driven here to stop at a step. */
const CLOSE_WAIT_MS = 10_000;

/** What the journal's header says started a run of serve's (RunOrigin.command). */
export const SERVE_COMMAND = 'serve';

export interface FolderPlaceOptions {
  /** The state folder (DIR/.durable-agent). */
  root: string;
  agents: readonly AgentDefinition[];
  /** The module the agents came from (kept in the header, as `run --agents` keeps it). */
  agentsModule: string | null;
  /** A line for serve's output: a run taken up, a run that stopped with an error. */
  notice: (line: string) => void;
  /** The master keys: the runs started here are sealed with them, and sealed runs read with them. */
  keys?: KeysGiven | undefined;
}

export class FolderPlace implements RunPlace {
  readonly source = 'folder';
  readonly pollMs = FOLDER_POLL_MS;
  private readonly runs: RunsFolder;
  private readonly sources: RunSources;
  /** The runs this process drives now. */
  private readonly driving = new Map<string, Promise<void>>();
  /** A start per id at a time: two requests with one id start it once. */
  private readonly starting = new Map<string, Promise<unknown>>();
  /** Aborted by close(): every run driven here stops at its next step. */
  private readonly stopping = new AbortController();
  /** The runs a take-up is looking at. */
  private readonly considering = new Set<string>();
  private readonly listeners = new Map<string, Set<(text: string) => void>>();

  constructor(private readonly options: FolderPlaceOptions) {
    this.runs = openRunsFolder(options.root, options.keys ? { keys: options.keys } : undefined);
    this.sources = new RunSources([options.root], null);
  }

  async find(runId: string): Promise<FoundRun | null> {
    const store = this.runs.store(runId);
    if (!(await store.exists())) return null;
    let summary;
    try {
      const loaded = await store.load({ fromLastSnapshot: true });
      const pause = (await store.control.read()).find((request) => request.kind === 'pause');
      summary = summaryOfJournal(loaded, { location: store.location, archived: false, pausedBy: pause?.by ?? null });
    } catch (error) {
      summary = unreadableSummary(runId, { location: store.location, archived: false }, (error as Error).message);
    }
    const handle = { key: keyOf(0, runId, null), source: 'folder' as const, store, archivedJournal: null, runDir: folderOfState(this.options.root), folder: { root: this.options.root, index: 0 } };
    return { summary, store, handle };
  }

  list(asked: PageAsked): Promise<RunsPage> {
    // The folder's own run and its archived runs have no id of the API's: runs by id only.
    return pageOf(this.sources, asked, (row) => /^0~[^~]+~$/.test(row.key));
  }

  async start(asked: StartAsked): Promise<{ created: boolean }> {
    if (this.stopping.signal.aborted) throw new ApiRequestError(409, 'conflict', 'The server is stopping: start the run again once it is back. Nothing was started.');
    const agent = this.options.agents.find((candidate) => candidate.name === asked.agent);
    if (!agent) throw new ServeUnknownAgentError(asked.agent, this.options.agents.map((candidate) => candidate.name));
    const before = this.starting.get(asked.runId) ?? Promise.resolve();
    const next = before.catch(() => {}).then(() => this.startOnce(agent, asked));
    this.starting.set(asked.runId, next);
    try {
      return await next;
    } finally {
      if (this.starting.get(asked.runId) === next) this.starting.delete(asked.runId);
    }
  }

  steered(runId: string): void {
    if (this.driving.has(runId)) return;
    void this.takeUp(runId, { waiting: true });
  }

  async followText(runId: string, listener: (text: string) => void): Promise<() => void> {
    let set = this.listeners.get(runId);
    if (!set) this.listeners.set(runId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(runId) === set) this.listeners.delete(runId);
    };
  }

  /** Takes up the runs of the folder serve started that are unfinished and wait for no person. */
  async resumeOwnRuns(): Promise<string[]> {
    const taken: string[] = [];
    for (const entry of this.runs.entries()) {
      if (entry.archived || entry.folderId === null) continue;
      if (await this.takeUp(entry.folderId, { waiting: false })) taken.push(entry.folderId);
    }
    return taken;
  }

  /**
   * Stops the runs driven here at their next step (a run that waits for a person stops waiting),
   * each saved as ever: the next serve takes them up. A step that does not end within
   * CLOSE_WAIT_MS (a model call that hangs) is left as a kill would leave it.
   */
  async close(): Promise<void> {
    this.stopping.abort();
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)));
    await Promise.race([Promise.allSettled([...this.driving.values()]), waited]);
    clearTimeout(timer);
    await this.sources.close();
  }

  private async startOnce(agent: AgentDefinition, asked: StartAsked): Promise<{ created: boolean }> {
    const store = this.runs.store(asked.runId);
    if (await store.exists()) {
      const loaded = await store.load({ fromLastSnapshot: true });
      const { context } = foldJournal(store.location, loaded);
      const differences: string[] = [];
      const pinned = loaded.header.agent?.name ?? null;
      if (pinned !== agent.name) differences.push(`agent: stored ${JSON.stringify(pinned)}, given ${JSON.stringify(agent.name)}`);
      if (context.task !== asked.task) differences.push('task: stored another task than the one given');
      const tenant = tenantOf(loaded.header);
      if (tenant !== (asked.tenant ?? DEFAULT_TENANT)) differences.push(`tenant: stored ${JSON.stringify(tenant)}, given ${JSON.stringify(asked.tenant ?? DEFAULT_TENANT)}`);
      if (differences.length) throw new RunIdTakenError(asked.runId, 'this server\'s folder of runs', differences);
      return { created: false };
    }
    await this.drive(store, agent, asked);
    return { created: true };
  }

  /**
   * Starts or resumes the run, driven here until it ends; resolves once its first record is
   * written (or it was found ended), rejects when it could not start.
   */
  private drive(store: FolderRunStore, agent: AgentDefinition, start: StartAsked | null): Promise<void> {
    const runId = store.runId!;
    return new Promise<void>((resolve, reject) => {
      let begun = false;
      const observer = (event: RuntimeEvent) => {
        if (event.type === 'started' || event.type === 'resumed' || event.type === 'attached') {
          begun = true;
          resolve();
        } else if (event.type === 'model-stream' && event.delta.type === 'text') {
          for (const listener of this.listeners.get(runId) ?? []) listener(event.delta.text);
        }
      };
      const common = { agent, store, observer, command: SERVE_COMMAND, wait: true, signal: this.stopping.signal, ...(this.options.agentsModule ? { agentsModule: this.options.agentsModule } : {}) };
      const driven = (start ? startRun({ ...common, task: start.task, tenant: start.tenant }) : resumeRun(common)).then(
        (result) => {
          if (!begun) resolve();
          this.options.notice(`[serve] run ${runId}: ${result.status}`);
        },
        (error: unknown) => {
          if (!begun) reject(error);
          else this.options.notice(`[serve] run ${runId} stopped: ${(error as Error).message}`);
        },
      );
      const kept = driven.finally(() => {
        if (this.driving.get(runId) === kept) this.driving.delete(runId);
        store.close();
      });
      this.driving.set(runId, kept);
    });
  }

  /**
   * Resumes a run of serve's that no process here drives: one that is unfinished and, unless
   * `waiting` (a decision just came for it), waits for no person. False when it is not one.
   */
  private async takeUp(runId: string, only: { waiting: boolean }): Promise<boolean> {
    if (this.stopping.signal.aborted) return false;
    if (this.driving.has(runId) || this.starting.has(runId) || this.considering.has(runId)) return false;
    this.considering.add(runId);
    const store = this.runs.store(runId);
    try {
      if (!(await store.exists())) return false;
      const loaded = await store.load({ fromLastSnapshot: true, finalRecord: true });
      if (loaded.header.startedBy?.command !== SERVE_COMMAND) return false;
      const { state } = foldJournal(store.location, loaded);
      if (FINAL_STATES.includes(state)) return false;
      if (state === 'awaitingDecision' && !only.waiting) return false;
      if ((await store.control.read()).some((request) => request.kind === 'pause')) return false;
      const agent = this.options.agents.find((candidate) => candidate.name === loaded.header.agent?.name);
      if (!agent) {
        this.options.notice(`[serve] run ${runId} is left as it is: its agent ${loaded.header.agent?.name ?? '(none)'} is not in the module given.`);
        return false;
      }
      await this.drive(store, agent, null);
      this.options.notice(`[serve] took up run ${runId}`);
      return true;
    } catch (error) {
      this.options.notice(`[serve] run ${runId} was not taken up: ${(error as Error).message}`);
      return false;
    } finally {
      this.considering.delete(runId);
    }
  }
}

/** `billing-3f9a1c2e`: the agent's name and 32 random bits, as `run --agents` names a run. */
export function newRunIdOf(agent: string): string {
  return `${agent.replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 100)}-${randomBytes(4).toString('hex')}`;
}
