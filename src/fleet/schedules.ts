/**
 * Schedules: an agent's task started at each tick of a cron expression, in a time zone, by
 * whichever workers of the fleet run then. Each tick starts exactly one run: its id is the
 * schedule's name and the tick (morning-report.20261207T080000Z), queued in the transaction that
 * moves the schedule's next tick on, so a second worker firing at once, a retry, or a worker
 * killed mid-way never starts a second one. Ticks missed while no worker ran are caught up (at
 * most `catchUp` of them, the latest) or skipped; with `overlap: 'skip'`, a tick while the
 * schedule's last run has not come to rest starts nothing.
 */
import { isAgentDefinition } from '../agent/agent-definition.ts';
import { checkDecisionPolicy } from '../awaits/needs-decision.ts';
import { type FleetLook, lookAtFleet } from '../store/pg/fleet-look.ts';
import type { Database } from '../store/pg/pool.ts';
import { databaseNow, deleteSchedule, type FiringTransaction, fireSchedules, insertSchedule, nextDueTick, readSchedule, readSchedules, type ScheduleRow, setSchedulePaused } from '../store/pg/schedules.ts';
import { ScheduleNameTakenError, ScheduleNotFoundError, ScheduleRefusedError } from './schedule-errors.ts';
import { agentRegistered } from './agent-registry.ts';
import type { AgentRunSpec } from './run-queue.ts';
import { checkTickRule, dueTicks, nextTickAfter, tickRunId } from './schedule-ticks.ts';
import { agentRunSpecOf, SubmitRefusedError, type SubmitRunOptions, UnknownAgentError } from './submit-run.ts';
import { canonicalJson } from '../tools/schema-hash.ts';
import { masterKeyIdOf } from '../seal/envelope.ts';
import { isKeyRing, type KeysGiven, type MasterKeys } from '../seal/keys.ts';
import { KeyHookError, KeyNotGivenError, SealedValueError } from '../seal/seal-errors.ts';
import { openScheduleTask, sealScheduleTask, sealSubmittedSpec } from '../seal/spec-content.ts';
import { keysReader, shownScheduleTask } from './sealed-tasks.ts';

export { MISSED_AFTER_MS } from './schedule-ticks.ts';
export { ScheduleCronError, ScheduleNameTakenError, ScheduleNotFoundError, ScheduleRefusedError } from './schedule-errors.ts';

/** What overlapping runs of one schedule do: 'skip' starts nothing while its last run is not at rest. */
export type ScheduleOverlap = 'allow' | 'skip';

export const DEFAULT_CATCH_UP = 1;
export const MAX_CATCH_UP = 1_000;
export const DEFAULT_TIMEZONE = 'UTC';

/** A schedule's name: its runs' ids begin with it, then a dot and the tick. */
const SCHEDULE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,79}$/;

export interface ScheduleOptions extends Pick<SubmitRunOptions, 'agent' | 'task' | 'tenant' | 'maxTurns' | 'requireApproval' | 'decisionTimeoutMs' | 'budget' | 'allowUnknownAgent'> {
  /**
   * The master keys the user holds: the schedule's task is kept sealed (under a key of the
   * schedule's own, wrapped by them), and only a worker holding them fires its ticks, each run
   * sealed under its own run key. A retry of the same add needs them too, to compare.
   */
  keys?: KeysGiven | undefined;
  /** Default: the agent's name. Letters, digits, "_" and "-", at most 80. */
  name?: string | undefined;
  /** Five fields (minute hour day-of-month month day-of-week), or six with the seconds first. */
  cron: string;
  /** An IANA time zone the expression is read in (default UTC). */
  timezone?: string | undefined;
  /** How many ticks missed while no worker ran are started late, the latest first (default 1; 0 skips them all). */
  catchUp?: number | undefined;
  /** Default 'skip': a tick while the schedule's last run is not at rest starts nothing. */
  overlap?: ScheduleOverlap | undefined;
}

/** A schedule as the fleet holds it. */
export interface Schedule {
  name: string;
  agent: string;
  /** A sealed schedule's opened with the keys given, else the words that name the master key it needs: never the sealed string. */
  task: string;
  /** The master key a sealed schedule's task needs (its key is wrapped under it); null for a plain schedule. */
  sealedUnder: string | null;
  cron: string;
  timezone: string;
  catchUp: number;
  overlap: ScheduleOverlap;
  paused: boolean;
  /** Null when the expression never ticks again. */
  nextTickAt: Date | null;
  lastTickAt: Date | null;
  lastRunId: string | null;
  /** Runs its ticks started. */
  started: number;
  /** Ticks that started nothing (missed past the catch-up, or while its last run went on). */
  skipped: number;
  createdAt: Date;
}

export interface ScheduledRun {
  schedule: Schedule;
  /** False: a schedule of that name was there already, the same; nothing was written. */
  created: boolean;
}

/** Adds a schedule; adding the same one again changes nothing (a retry), another one under its name is refused. */
export async function scheduleRun(pool: Database, options: ScheduleOptions): Promise<ScheduledRun> {
  const spec = specOf(options);
  const name = options.name ?? spec.agent;
  if (typeof name !== 'string' || !SCHEDULE_NAME.test(name)) {
    throw new ScheduleRefusedError(`its name ${JSON.stringify(name)} must be 1 to 80 letters, digits, "_" or "-", beginning with a letter or digit (its runs' ids are the name, a dot and the tick)`);
  }
  const timezone = options.timezone ?? DEFAULT_TIMEZONE;
  const catchUp = options.catchUp ?? DEFAULT_CATCH_UP;
  if (!Number.isSafeInteger(catchUp) || catchUp < 0 || catchUp > MAX_CATCH_UP) throw new ScheduleRefusedError(`catchUp must be a whole number from 0 to ${MAX_CATCH_UP}, not ${String(options.catchUp)}`);
  const overlap = options.overlap ?? 'skip';
  if (overlap !== 'allow' && overlap !== 'skip') throw new ScheduleRefusedError(`overlap must be 'allow' or 'skip', not ${JSON.stringify(overlap)}`);
  if (isAgentDefinition(options.agent)) checkDecisionPolicy({ requireApproval: options.requireApproval, allowQuestions: false }, options.agent.tools);
  if (!options.allowUnknownAgent && !isAgentDefinition(options.agent) && !(await agentRegistered(pool, spec.agent))) throw new UnknownAgentError(spec.agent);
  const rule = { cron: options.cron, timezone };
  const next = checkTickRule(rule, await databaseNow(pool));
  const runOptions = runOptionsOf(spec);
  const keys = keysReader(options.keys);
  const masterKeys = await keys();
  const sealed = masterKeys === null ? null : await sealScheduleTask(spec.task, name, masterKeys);
  const row = { name, agent: spec.agent, task: spec.task, cron: options.cron, timezone, catch_up: catchUp, overlap: overlap === 'allow', run_options: runOptions, next_tick_at: next };
  const created = await insertSchedule(pool, { ...row, task: sealed?.task ?? spec.task, task_key: sealed?.wrapped ?? null });
  const stored = await readSchedule(pool, name);
  // Removed between the insert and this read: the retry is then a new add.
  if (!stored) return scheduleRun(pool, options);
  if (!created) {
    const differences = await differencesOf(stored, row, masterKeys);
    if (differences.length > 0) throw new ScheduleNameTakenError(name, differences);
  }
  // The task as it was given: the caller holds it (and the keys, when it is sealed).
  return { schedule: { ...scheduleOf(stored, spec.task) }, created };
}

/**
 * Every schedule, by name. A sealed one's task is opened with `keys`, else it names the master
 * key it needs (never the sealed string).
 */
export async function listSchedules(pool: Database, options: { keys?: KeysGiven | undefined } = {}): Promise<Schedule[]> {
  const keys = keysReader(options.keys);
  return Promise.all((await readSchedules(pool)).map(async (row) => scheduleOf(row, await taskShown(row, keys))));
}

/** Its ticks start nothing until it is resumed. */
export async function pauseSchedule(pool: Database, name: string): Promise<Schedule> {
  if (!(await setSchedulePaused(pool, name, true, null))) throw new ScheduleNotFoundError(name);
  const row = (await readSchedule(pool, name))!;
  return scheduleOf(row, await taskShown(row, keysReader(undefined)));
}

/** Goes on from its next tick after now: the ticks that fell while it was paused start nothing. */
export async function resumeSchedule(pool: Database, name: string): Promise<Schedule> {
  const stored = await readSchedule(pool, name);
  if (!stored) throw new ScheduleNotFoundError(name);
  const next = nextTickAfter({ cron: stored.cron, timezone: stored.timezone }, await databaseNow(pool));
  if (!(await setSchedulePaused(pool, name, false, next))) throw new ScheduleNotFoundError(name);
  const row = (await readSchedule(pool, name))!;
  return scheduleOf(row, await taskShown(row, keysReader(undefined)));
}

/** A schedule's task as it is shown: a plain one as it is, a sealed one opened or named. */
function taskShown(row: ScheduleRow, keys: () => Promise<MasterKeys | null>): Promise<string> {
  return row.task_key === null ? Promise.resolve(row.task) : shownScheduleTask(row.task, row.task_key, row.name, keys);
}

/** No tick of it starts anything after this; the runs it started stay. */
export async function removeSchedule(pool: Database, name: string): Promise<void> {
  if (!(await deleteSchedule(pool, name))) throw new ScheduleNotFoundError(name);
}

/** What one firing did: the runs it queued, the ticks it skipped, and when the next tick it could fire is due. */
export interface FiredSchedules {
  started: string[];
  skipped: number;
  nextDueAt: Date | null;
  /**
   * The due schedules whose task is sealed under a master key this firing was not given (or its
   * keys hook could not open): their ticks were left as they were, for a worker that holds it.
   */
  leftSealed: Array<{ schedule: string; masterKey: string | null }>;
}

/**
 * Schedules fired in one firing: the rest wait for the next one (a worker fires again at once
 * while some were due). A sealed one whose key cannot be opened is passed over, not counted.
 */
export const FIRED_AT_ONCE = 50;

export interface FireOptions {
  /** The master keys the firing opens sealed schedules with. */
  keys?: KeysGiven | undefined;
  /**
   * Sealed schedules not to take: those whose key this caller could not open lately (a worker
   * keeps them apart a while, so a keys hook that cannot open them is not asked at every firing).
   */
  passed?: readonly string[] | undefined;
}

/**
 * Starts the runs of every tick due, once: what each worker of a fleet does between claims
 * (`looked`: what the worker's look at the fleet just found, so as not to ask again). A
 * schedule another firing holds is left to it; a schedule whose expression can no longer be
 * read (an upgrade of the cron library that refuses it) stops ticking rather than stopping the
 * firing of the others.
 */
export async function fireDueSchedules(pool: Database, looked?: FleetLook, options: FireOptions = {}): Promise<FiredSchedules> {
  // Nothing due (the most common answer): one statement, no transaction.
  const look = looked ?? (await lookAtFleet(pool));
  if (!look.schedulesDue) return { started: [], skipped: 0, nextDueAt: look.nextTick, leftSealed: [] };
  const keys = await keysReader(options.keys)();
  // A ring opens the schedules sealed under its keys alone; a hook may open any (it says when it cannot).
  const sealedTaken = keys === null ? { any: false, masters: [] } : isKeyRing(keys) ? { any: false, masters: keys.keyIds } : { any: true, masters: [] };
  const fired = await fireSchedules(pool, sealedTaken, async (firing) => {
    const started: string[] = [];
    const leftSealed = firing.leftSealed.map((left) => ({ schedule: left.name, masterKey: left.master }));
    let skipped = 0;
    // Every schedule taken in this firing is passed over by its next take: each is taken once.
    const passed = [...(options.passed ?? [])];
    let firedHere = 0;
    while (firedHere < FIRED_AT_ONCE) {
      const rows = await firing.take(FIRED_AT_ONCE - firedHere, passed);
      if (rows.length === 0) break;
      for (const row of rows) {
        passed.push(row.name);
        const task = await taskToFire(row, keys);
        if (task === null) {
          // Not moved on: its tick waits for a worker that can open it, as a sealed run waits for
          // one; nor counted, so schedules that cannot fire never keep those that can from firing.
          leftSealed.push({ schedule: row.name, masterKey: masterKeyIdOf(row.task_key) });
          continue;
        }
        firedHere++;
        const one = await fireSchedule(firing, row, task, keys);
        started.push(...one.started);
        skipped += one.skipped;
      }
    }
    return { started, skipped, leftSealed, full: firedHere === FIRED_AT_ONCE };
  });
  // A full firing left some due: the next one is due now. Else the next tick this caller can
  // fire: a tick left sealed stays due, and counting it would have a worker look again at once,
  // and again, for as long as no worker holding its key comes by.
  const cannotFire = [...(options.passed ?? []), ...fired.leftSealed.map((left) => left.schedule)];
  const nextDueAt = fired.full ? new Date(0) : await nextDueTick(pool, cannotFire);
  return { started: fired.started, skipped: fired.skipped, nextDueAt, leftSealed: fired.leftSealed };
}

/** A schedule's task to start its runs with: a sealed one opened with the keys, or null when they cannot open it. */
async function taskToFire(row: ScheduleRow, keys: MasterKeys | null): Promise<string | null> {
  if (row.task_key === null) return row.task;
  try {
    return await openScheduleTask(row.task, row.task_key, row.name, keys);
  } catch (error) {
    if (error instanceof KeyNotGivenError || error instanceof KeyHookError || error instanceof SealedValueError) return null;
    throw error;
  }
}

/** Queues the runs of a schedule's due ticks (or skips them) and moves its next tick on. */
async function fireSchedule(firing: FiringTransaction, row: ScheduleRow, task: string, keys: MasterKeys | null): Promise<{ started: string[]; skipped: number }> {
  const rule = { cron: row.cron, timezone: row.timezone, catchUp: row.catch_up, overlap: row.overlap };
  let due: ReturnType<typeof dueTicks>;
  try {
    due = dueTicks(rule, row.next_tick_at!, firing.now);
  } catch {
    await firing.record({ name: row.name, nextTickAt: null, lastTickAt: null, lastRunId: null, started: 0, skipped: 0 });
    return { started: [], skipped: 0 };
  }
  let ticks = due.start;
  let skipped = due.skipped;
  if (!row.overlap && ticks.length > 0 && row.last_run_id !== null && (await firing.runAtRest(row.last_run_id)) === false) {
    skipped += ticks.length;
    ticks = [];
  }
  let lastRunId: string | null = null;
  const started: string[] = [];
  for (const tick of ticks) {
    lastRunId = tickRunId(row.name, tick);
    const spec = tickSpecOf(row, task, tick);
    // Each run of a sealed schedule is sealed under a run key of its own, from its first row on.
    const sealed = row.task_key !== null && keys !== null ? await sealSubmittedSpec(spec, lastRunId, keys) : null;
    if (await firing.queueRun(lastRunId, sealed?.spec ?? spec, sealed?.wrapped ?? null)) started.push(lastRunId);
  }
  await firing.record({ name: row.name, nextTickAt: due.next, lastTickAt: ticks.at(-1) ?? null, lastRunId, started: started.length, skipped });
  return { started, skipped };
}

function specOf(options: ScheduleOptions): AgentRunSpec {
  try {
    return agentRunSpecOf(options);
  } catch (error) {
    if (error instanceof SubmitRefusedError) throw new ScheduleRefusedError(error.problem);
    throw error;
  }
}

/** What a schedule gives each of its runs over the agent's own. */
function runOptionsOf(spec: AgentRunSpec): Record<string, unknown> {
  const { kind: _kind, agent: _agent, task: _task, ...given } = spec;
  return given;
}

function tickSpecOf(row: ScheduleRow, task: string, tick: Date): AgentRunSpec {
  return { ...(row.run_options as Partial<AgentRunSpec>), kind: 'agent', agent: row.agent, task, schedule: { name: row.name, tick: tick.toISOString() } };
}

type GivenRow = Omit<ScheduleRow, 'paused' | 'last_tick_at' | 'last_run_id' | 'task_key' | 'started' | 'skipped' | 'created_at' | 'updated_at'>;

/**
 * What differs between the schedule stored and the one given. A sealed task is compared opened,
 * with the keys given; without them (or given for a plain one) that difference is said, never
 * the sealed string, and the task is not compared.
 */
async function differencesOf(stored: ScheduleRow, given: GivenRow, keys: MasterKeys | null): Promise<string[]> {
  const storedMaster = stored.task_key === null ? null : masterKeyIdOf(stored.task_key);
  let storedTask: string | null = stored.task;
  const sealing: string[] = [];
  if (stored.task_key !== null && keys === null) {
    sealing.push(`sealed: stored sealed under the master key ${JSON.stringify(storedMaster)}, given without keys`);
    storedTask = null;
  } else if (stored.task_key === null && keys !== null) {
    sealing.push('sealed: stored plain, given with keys');
  } else if (stored.task_key !== null) {
    storedTask = await openScheduleTask(stored.task, stored.task_key, stored.name, keys);
  }
  const fields = ['agent', 'task', 'cron', 'timezone', 'catch_up', 'overlap', 'run_options'] as const;
  const compared = { ...stored, task: storedTask };
  return sealing.concat(
    fields.flatMap((field) => {
      if (field === 'task' && storedTask === null) return [];
      // jsonb keeps its keys in an order of its own.
      const before = canonicalJson(compared[field]);
      const now = canonicalJson(given[field]);
      return before === now ? [] : [`${field.replace('_', ' ')}: stored ${before}, given ${now}`];
    }),
  );
}

function scheduleOf(row: ScheduleRow, task: string): Schedule {
  return {
    name: row.name,
    agent: row.agent,
    task,
    sealedUnder: row.task_key === null ? null : masterKeyIdOf(row.task_key),
    cron: row.cron,
    timezone: row.timezone,
    catchUp: row.catch_up,
    overlap: row.overlap ? 'allow' : 'skip',
    paused: row.paused,
    nextTickAt: row.next_tick_at,
    lastTickAt: row.last_tick_at,
    lastRunId: row.last_run_id,
    started: Number(row.started),
    skipped: Number(row.skipped),
    createdAt: row.created_at,
  };
}

