/**
 * A fleet worker: claims runs from PostgreSQL (FOR UPDATE SKIP LOCKED), drives each under a
 * lease it keeps renewed, and lets go of it when the run is done or it stops. A run whose
 * worker died is claimed by another once the lease expires, and resumed through the same
 * reconcile as the CLI. A worker that finds its lease taken over stops driving that run.
 */
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Tracer } from '@opentelemetry/api';
import { demoFollowUp, demoScript, DEMO_TASK } from '../demo/demo-task.ts';
import { EN } from '../lang/en.ts';
import type { Model } from '../model/model.ts';
import { scriptedModel } from '../model/scripted-model.ts';
import { resumeRun, startRun } from '../runtime/run-api.ts';
import type { RunEvent } from '../core/run-events.ts';
import { RunStoppedError } from '../core/stop-errors.ts';
import { requestWords } from '../control/control-request.ts';
import { RunPausedError } from '../control/run-control.ts';
import { claimNextRuns, type Lease, LeaseKeeper, releaseLeases } from '../store/pg/leases.ts';
import { LeaseLostError } from '../store/pg/pg-errors.ts';
import { AppendBatcher } from '../store/pg/append-batcher.ts';
import type { Database } from '../store/pg/pool.ts';
import { readRunSpec } from '../store/pg/queue.ts';
import { deleteRaiseUnderLease } from '../store/pg/raises.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { fleetDemoTools } from './fleet-demo-tools.ts';
import { WorkSignal } from './work-signal.ts';
import { STOPPED_AT_LIMIT_STATES } from '../../machines/agent-loop.types.ts';
import { type RaiseRequest, raiseProblem, raiseWords } from './raise-run.ts';
import type { DemoRunSpec, RunSpec } from './run-queue.ts';
import { unfinishedRunCount } from './run-queue.ts';
import { type AgentDefinition, AgentDefinitionError, agentModel, delegatedAgentsOf } from '../agent/agent-definition.ts';
import { TextPublisher } from './text-publisher.ts';
import { deliverChildEnd, fleetChildRuns } from './child-runs.ts';
import { fireDueSchedules } from './schedules.ts';
import { type FleetLook, lookAtFleet } from '../store/pg/fleet-look.ts';
import { liftQuotaStops } from './tenant-quota-stops.ts';
import { childRunIdOf } from '../runtime/run-tree.ts';
import { DurableAgentError } from '../util/durable-agent-error.ts';
import { drivableRuns, registerAgents } from './agent-registry.ts';
import type { ClaimCondition } from '../store/pg/leases.ts';
import { type RestedRun, WebhookDelivery, type WebhookSettings } from './webhooks.ts';
import { openDatabaseStore } from '../store/pg/open-database-store.ts';
import { tenantOf } from '../core/tenant.ts';
import { budgetReachedWords } from '../budget/budget-words.ts';
import { tenantChargeOf, tenantLimitsCapability, type TenantRules } from './tenant-limits.ts';
import { openFleetSpec } from '../store/pg/pg-run-keys.ts';
import type { KeysGiven, MasterKeys } from '../seal/keys.ts';

/** How many runs brought to rest a worker remembers the answers of, for their webhook events. */
const RESTED_KEPT = 1_000;

/** The least time between two firings of the schedules by one worker. */
const SCHEDULES_GAP_MS = 100;

/**
 * How often a worker looks for schedules it does not know the next tick of (one added since):
 * between two looks it wakes for the next tick it knows. Not at every claim: a busy worker's
 * claims would each cost the schedules a query.
 */
const SCHEDULES_LOOK_MS = 1_000;

/** How long a worker leaves a run it was refused to drive before it tries it again. */
const REFUSED_RUN_PAUSE_MS = 60_000;

/**
 * How long a worker leaves a run that an error stopped before it takes it up again: doubled by
 * each failure in a row, up to REFUSED_RUN_PAUSE_MS. A failure that comes back on every take-up
 * (a worker without its API key, a broken install) would otherwise be retried in a loop that
 * does nothing else; a passing one costs a second.
 */
const FAILED_RUN_PAUSE_MS = 1_000;

/** Exactly one of each pair is given: the first names are the current ones. */
type RunConcurrency = { runConcurrency: number; concurrency?: undefined } | { /** @deprecated runConcurrency */ concurrency: number; runConcurrency?: undefined };
type PollInterval = { pollIntervalMs: number; pollMs?: undefined } | { /** @deprecated pollIntervalMs */ pollMs: number; pollIntervalMs?: undefined };

export type WorkerOptions = WorkerSettings & RunConcurrency & PollInterval;

interface WorkerSettings {
  pool: Database;
  leaseMs: number;
  /** Exit once no run is left unfinished in the queue and none is being driven here. */
  exitWhenIdle: boolean;
  log: (line: string) => void;
  /**
   * The agents this worker drives (defineAgent): it takes up a run of one of them only at the
   * version the run started with, or one the definition declares compatible. Registered in
   * da_agents when the worker starts, so that a run no worker can take up says what it waits for.
   */
  agents?: readonly AgentDefinition[] | undefined;
  /** Builds the model a demo run's spec names (a real one needs the API key); without it, this worker takes up no demo run. */
  modelFor?: ((spec: DemoRunSpec) => Promise<Model>) | undefined;
  id?: string | undefined;
  /** Traces every run this worker drives (see RunParts.tracer). */
  tracer?: Tracer | undefined;
  traceContent?: boolean | undefined;
  /** Drills: a crash point (CRASH_AFTER) at which this worker process SIGKILLs itself, as in the demo. */
  crashAfter?: string | undefined;
  /**
   * Sends a signed JSON event to this URL each time a run of the fleet comes to rest (done,
   * failed, cancelled, waiting for a person, stopped at a limit), whichever worker moved it: at
   * least once, so a receiver deduplicates on the event's id. Only the events made for this URL:
   * its endpoint is registered before any run is taken. A delivery never holds up or fails
   * a run; its failures are retried and logged. Holds one more connection of the pool (to LISTEN).
   * See src/fleet/webhook-signature.ts for the signature (verifyWebhookSignature checks it).
   */
  webhook?: WebhookSettings | undefined;
  /**
   * The length of a tenant's rate limit window (max_requests_minute, max_tokens_minute), default a
   * minute: the limits are counted per window of this length. For tests; every worker of a fleet
   * must use the same.
   */
  rateWindowMs?: number | undefined;
  /**
   * The master keys the user holds (docs/encryption.md): the runs this worker starts are sealed
   * with them, and sealed runs open with them. A sealed run whose key is not among them is
   * refused (KeyNotGivenError naming the key) and left to a worker that has it, not failed.
   */
  keys?: KeysGiven | undefined;
}

interface ActiveRun {
  lease: Lease;
  controller: AbortController;
  done: Promise<void>;
}

export class Worker {
  readonly id: string;
  private readonly active = new Map<string, ActiveRun>();
  /** Leases being released: a run's slot is free as soon as its run ended, its release goes on beside the next claim. */
  private readonly releasing = new Set<Promise<void>>();
  /** The last runs this worker brought to rest, with their answers: what their webhook events carry. */
  private readonly restedHere = new Map<string, RestedRun>();
  /** Leases whose release goes out at the next turn of the event loop. */
  private toRelease: Lease[] = [];
  private stopping = false;
  private keysRead: Promise<MasterKeys | null> | null = null;
  /** The sealed schedules whose tick this worker said it left for a worker holding their key. */
  private readonly sealedSchedulesSaid = new Set<string>();
  /**
   * Sealed schedules whose key this worker could not open, until when its firings pass them
   * over: a keys hook that cannot open them is not asked again at every firing.
   */
  private readonly schedulesPassed = new Map<string, number>();
  private wake: (() => void) | null = null;
  /** Set by a wake that came while no nap was under way: the next nap does not wait. */
  private woken = false;
  /** When this worker next looks for due schedule ticks (epoch ms): at the earliest tick due, or a poll interval on. */
  private schedulesAt = 0;
  /** Whether some tenant has a most of runs driven at once, as this worker last looked: its claims then take turns. */
  private tenantLimits: boolean | undefined = undefined;
  /** The tenants with a quota or a rate limit, as this worker last looked: only their runs check them before a call. */
  private tenantRules = new Map<string, TenantRules>();
  /** The month this worker last queued again the runs stopped at a quota in an earlier one. */
  private quotaMonth: string | null = null;
  private readonly signal: WorkSignal;
  /** The model's text of the runs driven here, as it streams, published for their followers. */
  private readonly texts: TextPublisher;
  private readonly webhooks: WebhookDelivery | null;
  /** The runs driven here write through it: several runs' records to a statement. */
  private readonly batcher: AppendBatcher;

  /** How many runs this worker drives at once (each run's calls run as its own tool concurrency says). */
  private readonly runConcurrency: number;
  /** How often to look for work when there is none. */
  private readonly pollIntervalMs: number;

  /** The agents by name, and what the claim takes: demo runs (with modelFor) and runs of these agents at a version they accept. */
  private readonly agents = new Map<string, AgentDefinition>();
  private readonly drivable: ClaimCondition;
  /**
   * Runs this worker was refused to drive (a definition that does not fit what the run pinned,
   * a policy it cannot apply), until when it leaves them: taken up again at once, each would
   * be refused again, in a loop that does nothing else.
   */
  private readonly leftAlone = new Map<string, number>();
  /** How many times in a row an error stopped each run here (FAILED_RUN_PAUSE_MS). */
  private readonly failuresInARow = new Map<string, number>();

  constructor(private readonly options: WorkerOptions) {
    for (const agent of options.agents ?? []) {
      if (this.agents.has(agent.name)) throw new AgentDefinitionError(agent.name, 'a worker was given two agents of that name');
      this.agents.set(agent.name, agent);
    }
    // The agents their sub-agent tools delegate to: their child runs are queued, and this worker drives them too.
    for (const agent of [...this.agents.values()]) {
      for (const delegate of delegatedAgentsOf(agent)) {
        const known = this.agents.get(delegate.name);
        if (known && known.version !== delegate.version) throw new AgentDefinitionError(delegate.name, `a sub-agent tool of ${agent.name} delegates to another version of it (${delegate.version}) than the worker was given (${known.version})`);
        this.agents.set(delegate.name, delegate);
      }
    }
    this.drivable = drivableRuns(options.modelFor !== undefined, [...this.agents.values()]);
    this.runConcurrency = options.runConcurrency ?? options.concurrency!;
    this.pollIntervalMs = options.pollIntervalMs ?? options.pollMs!;
    this.id = options.id ?? `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    this.signal = new WorkSignal(options.pool, () => this.wakeUp(), (line) => options.log(`[worker ${this.id}] ${line}`));
    this.texts = new TextPublisher(options.pool);
    this.batcher = new AppendBatcher(options.pool);
    this.webhooks = options.webhook
      ? new WebhookDelivery(
          options.pool,
          options.webhook,
          (line) => options.log(`[worker ${this.id}] webhook: ${line}`),
          (runId) => this.restedHere.get(runId),
          options.keys === undefined ? undefined : () => this.masterKeys(),
        )
      : null;
  }

  /** Runs until stop() or, with exitWhenIdle, until the queue is empty. */
  async run(): Promise<void> {
    const { log } = this.options;
    await registerAgents(this.options.pool, [...this.agents.values()], this.id);
    const drives = [...(this.options.modelFor ? ['demo'] : []), ...[...this.agents.values()].map((agent) => `${agent.name}@${agent.version}`)];
    log(`[worker ${this.id}] started: run concurrency ${this.runConcurrency}, lease ${this.options.leaseMs} ms; drives ${drives.join(', ') || 'nothing (no agents, no demo)'}`);
    // Before any run is taken: each run this worker brings to rest has an event for its endpoint.
    await this.webhooks?.register();
    this.webhooks?.start();
    while (!this.stopping) {
      await this.signal.ensure();
      this.woken = false;
      await this.fireSchedules();
      let claimed = false;
      while (!this.stopping && this.active.size < this.runConcurrency) {
        const leases = await this.tryClaim(this.runConcurrency - this.active.size);
        if (leases.length === 0) break;
        claimed = true;
        for (const lease of leases) {
          // A claim sent before a drive here was refused can come back with that very run, once
          // its release committed first: it is given back, not driven (and refused) twice.
          if (this.isLeftAlone(lease.runId)) this.release(lease);
          else this.drive(lease);
        }
      }
      if (!claimed && this.options.exitWhenIdle && this.active.size === 0 && (await this.queueIsEmpty())) break;
      await this.nap();
    }
    await Promise.all([...this.active.values()].map((run) => run.done));
    await Promise.all(this.releasing);
    await this.webhooks?.stop();
    await this.signal.stop();
    await this.texts.flush();
    log(`[worker ${this.id}] stopped`);
  }

  /** Graceful stop: no new claims; each run stops after its current step, saved, and its lease is released. */
  stop(why: string): void {
    if (this.stopping) return;
    this.stopping = true;
    this.options.log(`[worker ${this.id}] stopping (${why}): finishing the current step of ${this.active.size} run(s)`);
    for (const run of this.active.values()) run.controller.abort(new RunStoppedError(why));
    this.wakeUp();
  }

  private wakeUp(): void {
    this.woken = true;
    this.wake?.();
  }

  /** Up to `slots` runs, in one statement. */
  private async tryClaim(slots: number): Promise<Lease[]> {
    try {
      return await claimNextRuns(this.options.pool, this.id, this.options.leaseMs, slots, this.claimable(), this.tenantLimits);
    } catch (error) {
      this.options.log(`[worker ${this.id}] cannot claim runs right now (${messageOf(error)}); retrying`);
      return [];
    }
  }

  private async queueIsEmpty(): Promise<boolean> {
    try {
      return (await unfinishedRunCount(this.options.pool, this.claimable())) === 0;
    } catch {
      return false;
    }
  }

  private isLeftAlone(runId: string): boolean {
    return (this.leftAlone.get(runId) ?? 0) > Date.now();
  }

  /** What a claim may take: the runs this worker drives, but those it was refused lately. */
  private claimable(): ClaimCondition {
    const now = Date.now();
    for (const [runId, until] of this.leftAlone) if (until <= now) this.leftAlone.delete(runId);
    const { drivable } = this;
    const excluded = [...this.leftAlone.keys()];
    return { where: (first) => `${drivable.where(first)} AND NOT (da_runs.id = ANY($${first + drivable.params.length}::text[]))`, params: [...drivable.params, excluded] };
  }

  /**
   * Looks at the fleet (fleet-look.ts) and queues the runs of the schedules' due ticks: every
   * worker does, and each tick starts one run whichever worker fires it (fleet/schedules.ts). The
   * look also says whether claims must take turns (a tenant's limit). A failure is said and tried
   * again a poll later.
   */
  private async fireSchedules(): Promise<void> {
    if (Date.now() < this.schedulesAt) return;
    const { log, pool } = this.options;
    let nextDueAt: Date | null = null;
    try {
      const look = await lookAtFleet(pool);
      this.tenantLimits = look.tenantLimits;
      this.tenantRules = look.tenantRules;
      if (look.month !== this.quotaMonth) await this.liftEarlierMonthsStops(look);
      const now = Date.now();
      for (const [schedule, until] of this.schedulesPassed) if (until <= now) this.schedulesPassed.delete(schedule);
      const fired = await fireDueSchedules(pool, look, {
        keys: this.options.keys === undefined ? undefined : () => this.masterKeys(),
        passed: [...this.schedulesPassed.keys()],
      });
      for (const runId of fired.started) log(`[worker ${this.id}] schedule tick: queued run ${runId}`);
      for (const { schedule } of fired.leftSealed) this.schedulesPassed.set(schedule, now + REFUSED_RUN_PAUSE_MS);
      this.noteSealedSchedules(fired.leftSealed);
      if (fired.skipped > 0) log(`[worker ${this.id}] schedule ticks skipped: ${fired.skipped} (missed past their catch-up, or their schedule's last run still going on)`);
      nextDueAt = fired.nextDueAt;
    } catch (error) {
      log(`[worker ${this.id}] cannot fire schedules right now (${messageOf(error)}); retrying`);
    }
    // A tick due already is another worker's firing (its schedule locked) or the rest of a full one: looked at again shortly, not in a loop.
    const looked = Date.now() + Math.max(this.pollIntervalMs, SCHEDULES_LOOK_MS);
    this.schedulesAt = Math.max(Date.now() + SCHEDULES_GAP_MS, Math.min(looked, nextDueAt?.getTime() ?? Number.POSITIVE_INFINITY));
  }

  /**
   * At a new month a tenant's spend starts from nothing: its runs stopped at its quota in an
   * earlier month are queued again (so too at this worker's start, for a month that turned while
   * no worker ran). Every worker does; a run already queued again is left as it is.
   */
  private async liftEarlierMonthsStops(look: FleetLook): Promise<void> {
    const { log, pool } = this.options;
    for (const [tenant, rules] of look.tenantRules) {
      if (!rules.quota) continue;
      const lifted = await liftQuotaStops(pool, tenant, `worker ${this.id}`, look.month);
      if (lifted.length > 0) log(`[worker ${this.id}] ${look.month} began: tenant ${tenant}'s run(s) stopped at its quota in an earlier month queued again: ${lifted.join(', ')}`);
    }
    this.quotaMonth = look.month;
  }

  /** Waits --poll-ms, or less: until a run here ends, work is announced (work-signal.ts), a schedule's tick is due, or stop(). */
  private nap(): Promise<void> {
    if (this.woken) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(0, Math.min(this.pollIntervalMs, this.schedulesAt - Date.now())));
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  private drive(lease: Lease): void {
    const controller = new AbortController();
    const done = this.driveRun(lease, controller).finally(() => {
      this.active.delete(lease.runId);
      this.wakeUp();
    });
    this.active.set(lease.runId, { lease, controller, done });
  }

  private async driveRun(lease: Lease, controller: AbortController): Promise<void> {
    const { pool, log, leaseMs } = this.options;
    const tag = `[worker ${this.id}] run ${lease.runId}`;
    const keeper = new LeaseKeeper(pool, lease, leaseMs, (error) => controller.abort(error)).start();
    let lost = false;
    try {
      const keys = this.options.keys === undefined ? undefined : () => this.masterKeys();
      // A task submitted sealed is opened with this worker's keys: without them the run is refused, nothing written.
      const spec = await openFleetSpec(pool, lease.runId, await this.specOf(lease), () => this.masterKeys());
      // Read at each reply and each call, not once: a quota set while the run is driven takes hold at the worker's next look.
      const tenant = tenantOf(spec as { tenant?: unknown });
      const rules = (name: string) => this.tenantRules.get(name);
      const store = openDatabaseStore(pool, lease.runId, { lease, batcher: this.batcher, keys, tenantCharge: tenantChargeOf(rules, tenant) });
      const limits = [
        tenantLimitsCapability({ pool, tenant, rules, windowMs: this.options.rateWindowMs, onWait: (ms) => log(`${tag}: tenant ${tenant}'s rate limit is reached; the model call waits ${Math.ceil(ms)} ms for the next window`) }),
      ];
      const agent = spec.kind === 'agent' ? this.agents.get(spec.agent)! : undefined;
      const raise = this.raiseOf(tag, lease);
      let reopened = false;
      const parts = {
        store,
        model: agent ? await agentModel(agent) : await this.options.modelFor!(spec as DemoRunSpec),
        tools: agent ? agent.tools : this.demoTools(spec as DemoRunSpec, lease),
        agent,
        observer: (event: RunEvent) => {
          if (event.type === 'reopened') reopened = true;
          // The model's text as it streams, for whoever follows the run (durable-agent serve).
          if (event.type === 'model-stream' && event.delta.type === 'text') this.texts.add(lease.runId, event.delta.text);
          if (event.type === 'model-reply') void this.texts.flush();
          this.report(tag, event, raise);
        },
        signal: controller.signal,
        command: 'worker',
        // A sub-agent call queues its child for any worker; the run lets go of this one meanwhile.
        childRuns: fleetChildRuns(pool, lease.runId, keys),
        tracer: this.options.tracer,
        traceContent: this.options.traceContent,
        // A child queued by a sub-agent call hangs under that call's span, whichever worker traced it.
        ...(this.options.tracer && spec.kind === 'agent' && spec.traceParent ? { traceParent: await traceParentContext(spec.traceParent) } : {}),
        // A run that waits for a person stops and lets go of its lease and this worker's slot:
        // it is claimable again once a decision for its call is in da_decisions.
        wait: false,
        limits,
        ...(this.options.crashAfter ? { crashAfter: this.options.crashAfter, onCrash: () => process.kill(process.pid, 'SIGKILL') } : {}),
      };
      const resuming = await store.exists();
      log(`${tag}: claimed (lease epoch ${lease.epoch}), ${resuming ? 'resuming' : 'starting'}${raise ? ` with the limits raised (${raiseWords(raise)})` : ''}`);
      // A raise is what the operator gave the run to go on with, as a file run's resume gives it.
      const raised = raise
        ? { ...(raise.maxTurns !== undefined ? { maxTurns: raise.maxTurns } : {}), ...(raise.budget ? { budget: raise.budget } : {}), ...(raise.tenantQuota ? { liftTenantQuota: true } : {}) }
        : {};
      const result = resuming
        ? await resumeRun({ ...parts, keepPause: true, ...raised })
        : await startRun({ ...parts, task: spec.kind === 'agent' ? spec.task : DEMO_TASK, maxTurns: spec.maxTurns, ...policyOf(spec), ...(spec.kind === 'agent' && spec.calledBy ? { calledBy: spec.calledBy } : {}), ...(spec.kind === 'agent' && spec.tenant ? { tenant: spec.tenant } : {}) });
      this.failuresInARow.delete(lease.runId);
      // A child's end goes to the run that waits for it, through that run's decisions.
      if (spec.kind === 'agent' && spec.calledBy) await deliverChildEnd(pool, { runId: lease.runId, agent: spec.agent, calledBy: spec.calledBy }, result, keys);
      // A sealed run's event carries no answer unless content is asked for (webhook-body.ts).
      if (this.webhooks) this.noteRested(lease.runId, { state: result.status, text: result.text ?? null, failure: result.failure?.message ?? null, sealed: store.sealingOfRun?.().sealed ?? false });
      // Its REOPEN record deletes the raise; one that could not reopen the run would make it claimable for ever.
      if (lease.raise != null && !reopened) await this.dropRaise(tag, lease, raise, result.status);
      const waits = result.waiting?.map((call) => `${call.tool_use_id} ${call.name}`).join(', ');
      const cancelled = result.cancellation ? ` ${requestWords(result.cancellation)}` : '';
      const quota = result.budgetStop?.tenant;
      const stopped = !(STOPPED_AT_LIMIT_STATES as readonly string[]).includes(result.status)
        ? ''
        : quota !== undefined
          ? `; ${budgetReachedWords(result.budgetStop!)}; stopped, resumable: durable-agent tenant set ${quota} with a larger quota lets it go on now; the workers go on with it when the month turns`
          : `; stopped, resumable: durable-agent raise --run ${lease.runId} gives it more`;
      const children = (result.waiting ?? []).filter((call) => call.needs === 'child').map((call) => childRunIdOf(lease.runId, call.tool_use_id));
      if (children.length > 0 && children.length === result.waiting?.length) {
        const many = children.length > 1;
        log(`${tag}: waits for its sub-agent run${many ? 's' : ''} ${children.join(', ')} (queued for any worker); saved, lease released, taken up again when ${many ? 'they have' : 'that run has'} ended`);
        return;
      }
      const outcome = result.text ? `: ${result.text}` : result.failure ? `: ${result.failure.message}` : waits ? ` for a person (${waits}); lease released` : cancelled || stopped;
      log(`${tag}: ${result.status}${outcome}`);
    } catch (error) {
      if (error instanceof LeaseLostError) {
        lost = true;
        log(`${tag}: fenced off: ${error.message}`);
      } else if (error instanceof RunPausedError) {
        log(`${tag}: ${error.why}; saved, lease released, not claimed again until unpaused (durable-agent unpause --run ${lease.runId})`);
      } else if (error instanceof RunStoppedError) {
        log(`${tag}: stopped between two steps, saved; releasing the lease`);
      } else if (error instanceof DurableAgentError && error.kind === 'refused') {
        this.leftAlone.set(lease.runId, Date.now() + REFUSED_RUN_PAUSE_MS);
        log(`${tag}: [ALERT] this worker cannot drive it, nothing was run: ${messageOf(error)} (left to other workers; this one tries again in ${REFUSED_RUN_PAUSE_MS / 1000} s)`);
      } else {
        const failures = (this.failuresInARow.get(lease.runId) ?? 0) + 1;
        this.failuresInARow.set(lease.runId, failures);
        // Bounded like leftAlone: a run another worker finished is never heard of here again.
        if (this.failuresInARow.size > RESTED_KEPT) this.failuresInARow.delete(this.failuresInARow.keys().next().value!);
        const pauseMs = Math.min(REFUSED_RUN_PAUSE_MS, FAILED_RUN_PAUSE_MS * 2 ** (failures - 1));
        this.leftAlone.set(lease.runId, Date.now() + pauseMs);
        log(`${tag}: stopped by an error, the run is saved up to its last step and will be resumed: ${messageOf(error)} (failure ${failures} in a row; this worker takes it up again in ${pauseMs / 1000} s)`);
      }
    } finally {
      keeper.stop();
      if (!lost && !keeper.isLost) this.release(lease);
    }
  }

  /**
   * Says once per schedule that its due tick was left for a worker holding its master key (a
   * sealed schedule's task cannot be opened here): the tick stays due, nothing is started, the
   * way a sealed run this worker cannot open is left to another.
   */
  private noteSealedSchedules(left: ReadonlyArray<{ schedule: string; masterKey: string | null }>): void {
    for (const { schedule, masterKey } of left) {
      if (this.sealedSchedulesSaid.has(schedule)) continue;
      this.sealedSchedulesSaid.add(schedule);
      const key = masterKey === null ? 'a master key this worker cannot read' : `the master key "${masterKey}"`;
      this.options.log(
        `[worker ${this.id}] [ALERT] schedule ${schedule}: its tick is due, but its task is sealed under ${key}, which this worker was not given (or cannot open with): ` +
          'nothing was started here, the tick is left to a worker that holds it (give this worker the key, or start one with it)',
      );
    }
  }

  /** The master keys given, read once (a hook's, when first needed). */
  private masterKeys(): Promise<MasterKeys | null> {
    const given = this.options.keys;
    this.keysRead ??= given === undefined ? Promise.resolve(null) : typeof given === 'function' ? given() : Promise.resolve(given);
    return this.keysRead;
  }

  private noteRested(runId: string, rested: RestedRun): void {
    this.restedHere.delete(runId);
    this.restedHere.set(runId, rested);
    // Bounded: an event this worker has not sent by then is sent by reading its run back.
    if (this.restedHere.size > RESTED_KEPT) this.restedHere.delete(this.restedHere.keys().next().value!);
  }

  /**
   * Lets go of a lease without holding the run's slot: nothing is written under it any more, and
   * no one (this worker included) can claim the run until the release has committed. The runs
   * that end in the same turn of the event loop are released in one statement.
   */
  private release(lease: Lease): void {
    this.toRelease.push(lease);
    if (this.toRelease.length > 1) return;
    const released: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => {
        const leases = this.toRelease;
        this.toRelease = [];
        return releaseLeases(this.options.pool, leases);
      })
      .catch(() => {})
      .finally(() => this.releasing.delete(released));
    this.releasing.add(released);
  }

  /** The raise the claim read with the lease; one that is not whole is said and left out. */
  private raiseOf(tag: string, lease: Lease): RaiseRequest | null {
    if (lease.raise === undefined || lease.raise === null) return null;
    const problem = raiseProblem(lease.raise);
    if (problem === null) return lease.raise as RaiseRequest;
    this.options.log(`${tag}: [ALERT] the raise in da_controls cannot be applied (${problem}): ${JSON.stringify(lease.raise)}`);
    return null;
  }

  /** Under the lease: the very raise the claim read (a newer one stays), or any when what it read was no raise. */
  private async dropRaise(tag: string, lease: Lease, raise: RaiseRequest | null, status: string): Promise<void> {
    await deleteRaiseUnderLease(this.options.pool, lease.runId, lease.epoch, raise);
    this.options.log(`${tag}: [ALERT] the raise did not let the run go on (it is ${status}); removed. Ask again with limits above those status shows.`);
  }

  /** The spec the claim read with the lease (asked for only when a lease came without it). */
  private async specOf(lease: Lease): Promise<RunSpec> {
    let spec = lease.spec as RunSpec | undefined;
    if (spec === undefined) {
      spec = (await readRunSpec(this.options.pool, lease.runId)) as RunSpec | undefined;
    }
    const drivable = spec?.kind === 'demo' ? this.options.modelFor !== undefined : spec?.kind === 'agent' && this.agents.has(spec.agent);
    if (!spec || !drivable) throw new Error(`run ${lease.runId} has a spec this worker cannot drive: ${JSON.stringify(spec)}`);
    return spec;
  }

  private demoTools(spec: DemoRunSpec, lease: Lease): ToolDefinition[] {
    return fleetDemoTools(this.options.pool, lease, { paceMs: spec.paceMs, jitterMs: spec.jitterMs });
  }

  private report(tag: string, event: RunEvent, raise: RaiseRequest | null): void {
    if (event.type === 'lock-taken-over') this.options.log(`${tag}: taken over from ${event.holder} (${event.why})`);
    if (event.type === 'reopened') this.options.log(`${tag}: reopened from ${event.previousState}${raise ? ` with the raise by ${raise.by}` : ''}: goes on from where it stopped`);
    if (event.type === 'decided') this.options.log(`${tag}: decision ${event.call.id} ${event.call.name}: ${event.decision.verdict} by ${event.decision.by}`);
    if (event.type === 'reconciled') this.options.log(`${tag}: reconcile ${event.call.id} ${event.call.name}: ${event.decision}`);
    if (event.type === 'ledger-write-failed') this.options.log(`${tag}: [ALERT] ledger write failed for ${event.call.id}: ${event.error.message}`);
  }
}

/** The rule for decisions, the budget and the compaction a spec gives; pinned in the journal at the start, applied by every resume. */
function policyOf(spec: RunSpec) {
  return {
    ...(spec.requireApproval ? { requireApproval: spec.requireApproval } : {}),
    ...(spec.decisionTimeoutMs ? { decisionTimeoutMs: spec.decisionTimeoutMs } : {}),
    // Kept in the journal at the start (the budget in the run's context, the rest in its header): a resume applies them.
    ...(spec.budget ? { budget: spec.budget } : {}),
    ...(spec.kind === 'demo' && spec.compaction ? { compaction: spec.compaction } : {}),
    ...(spec.kind === 'demo' && spec.clearToolUses ? { clearToolUses: spec.clearToolUses } : {}),
  };
}

export const FLEET_DONE_TEXT = 'Report stored in demo_reports, task complete.';

export const SCRIPTED_DEMO_MODEL = 'scripted-demo';

/** The model a demo spec names: the scripted demo model, paced as asked. */
export function scriptedDemoModel(spec: DemoRunSpec): Model {
  // afterScript: a run forked with a message (fork --run ID --message) gets an answer to it.
  return scriptedModel(demoScript({ ...EN.demo, done: FLEET_DONE_TEXT }), { name: SCRIPTED_DEMO_MODEL, paceMs: spec.paceMs, jitterMs: spec.jitterMs, afterScript: demoFollowUp() });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function traceParentContext(value: string) {
  const { contextOfTraceParent } = await import('../telemetry/trace-parent.ts');
  return contextOfTraceParent(value) ?? undefined;
}
