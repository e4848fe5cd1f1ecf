/**
 * A fleet run's submitted task, sealed: the task waits in the queue (da_runs.spec) until a worker
 * starts the run, and it is a user's words like the journal's first message. It is sealed with
 * the run's own key, made at the submit and kept in the run's row, and bound to the run's id and
 * its place; the rest of the spec (agent, limits, tenant, lineage) stays readable, since workers
 * claim and operate runs by it without any key.
 */
import { type RunKey, type WrappedRunKey, createRunKey, masterKeyIdOf, unwrapRunKey } from './envelope.ts';
import type { MasterKeys } from './keys.ts';
import { KeyNotGivenError } from './seal-errors.ts';
import { isSealedValue, openValue, sealedKeyIdOf, sealValue } from './value-codec.ts';

/** The place a submitted task is sealed for (bound with the fleet run's id). */
const SPEC_TASK = 'spec.task';

/** The spec with its task sealed under a new run key, and that key wrapped for the run's row. */
export async function sealSubmittedSpec<S extends { task: string }>(spec: S, fleetRun: string, keys: MasterKeys): Promise<{ spec: S; wrapped: WrappedRunKey }> {
  const { runKey, wrapped } = await createRunKey(keys);
  return { spec: withSealedTask(spec, fleetRun, runKey), wrapped };
}

/**
 * A fork's spec (its parent's): the task opened with the parent's key (`open`) and, when the child
 * is sealed, sealed again under the child's run key for the child's id; a plain child's task
 * stays as it was (plain: a sealed parent's child is always sealed).
 */
export async function forkedSpec<S extends { task?: unknown }>(parentSpec: S, open: (spec: S) => Promise<S>, child: { fleetRun: string; runKey: RunKey | null }): Promise<S> {
  if (child.runKey === null || typeof parentSpec.task !== 'string') return parentSpec;
  const opened = await open(parentSpec);
  return withSealedTask(opened as S & { task: string }, child.fleetRun, child.runKey);
}

/** A plain spec's task sealed under a run key for its fleet run (a run sealed in: keys rotate --seal-plain); a spec without a task text is given back as it is. */
export function sealSpecTask<S extends { task?: unknown }>(spec: S, fleetRun: string, runKey: RunKey): S {
  if (typeof spec.task !== 'string' || isSealedValue(spec.task)) return spec;
  return withSealedTask(spec as S & { task: string }, fleetRun, runKey);
}

function withSealedTask<S extends { task: string }>(spec: S, fleetRun: string, runKey: RunKey): S {
  return { ...spec, task: sealValue(spec.task, runKey, { runId: fleetRun, field: SPEC_TASK }) };
}

/** Whether a spec's task is sealed. */
export function isSpecSealed(spec: unknown): boolean {
  return spec !== null && typeof spec === 'object' && isSealedValue((spec as { task?: unknown }).task);
}

/** How a sealed spec's run key is reached: its wrap in the run's row, the master keys, and the refusal when the wrap is gone. */
export interface SpecKeyAccess {
  wrapped(): Promise<WrappedRunKey | null>;
  keys(): Promise<MasterKeys | null>;
  missing(keyId: string): Error;
}

/**
 * The spec with its task opened (a plain spec is given back as it is). Without the master key
 * its run key is wrapped under, a KeyNotGivenError naming that key; a shredded run's, the
 * refusal `missing` gives.
 */
export async function openSubmittedSpec<S extends object>(spec: S, fleetRun: string, access: SpecKeyAccess): Promise<S> {
  const task = (spec as { task?: unknown }).task;
  if (!isSealedValue(task)) return spec;
  const wrapped = await access.wrapped();
  if (wrapped === null) throw access.missing(sealedKeyIdOf(task)!);
  const keys = await access.keys();
  if (keys === null) throw new KeyNotGivenError(wrapped.master, 'master key', fleetRun);
  const runKey = await unwrapRunKey(wrapped, keys, fleetRun);
  return { ...spec, task: openValue(task, runKey, { runId: fleetRun, field: SPEC_TASK }) };
}

/**
 * A schedule's task, sealed: it stays in the schedule's row for as long as the schedule ticks,
 * so it is sealed under a data key of the schedule's own (wrapped by the master key, the way a
 * run key is: a keys hook only ever wraps data keys, and a rotation re-wraps one small value),
 * bound to the schedule's name. Each run a tick starts is sealed again under its own run key.
 */
const SCHEDULE_TASK = 'schedule.task';

export async function sealScheduleTask(task: string, schedule: string, keys: MasterKeys): Promise<{ task: string; wrapped: WrappedRunKey }> {
  const { runKey, wrapped } = await createRunKey(keys);
  return { task: sealValue(task, runKey, { runId: schedule, field: SCHEDULE_TASK }), wrapped };
}

/** A sealed schedule's task opened; without the master key its key is wrapped under, a KeyNotGivenError naming that key. */
export async function openScheduleTask(task: string, wrapped: unknown, schedule: string, keys: MasterKeys | null): Promise<string> {
  const master = masterKeyIdOf(wrapped);
  if (keys === null && master !== null) throw new KeyNotGivenError(master, 'master key');
  const scheduleKey = await unwrapRunKey(wrapped, keys, schedule);
  return openValue(task, scheduleKey, { runId: schedule, field: SCHEDULE_TASK }) as string;
}
