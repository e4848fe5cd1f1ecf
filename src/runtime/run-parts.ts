/**
 * The driver's parts, in one place: the options a process gives for itself (checked once, before
 * the run's lock), with what the run's settings give it, resolved (pinned-settings.ts: the tools
 * as a registry, the capabilities, the model as the run asks it, whose the run is). Each part is
 * handed only what it uses; the settings' own fields are theirs alone.
 */
import type { RunObserver } from '../core/run-events.ts';
import { type Lang, langOf, wordsOf } from '../lang/lang.ts';
import type { RunTracing } from '../telemetry/run-tracing.ts';
import { DEFAULT_TOOL_TIMEOUT_MS } from '../tools/execute-call.ts';
import { type CrashPoints, type CrashSpec, crashPointsOf } from './crash-points.ts';
import type { AppliedSettings } from './pinned-settings.ts';
import type { DriverParts } from './run-driver.ts';
import { DEFAULT_MAX_TOKENS, type RunParts } from './run-options.ts';
import { snapshotEveryOf } from './snapshot-policy.ts';
import { toolConcurrencyOf } from './tool-scheduler.ts';

/**
 * What the driver's parts are made of: the options a process gives for itself, none of them
 * pinned (a resume may give others), with the store as given.
 */
export type DriverOptions = Pick<RunParts, 'store' | 'signal' | 'observer' | 'inspect' | 'toolTimeoutMs' | 'toolConcurrency' | 'maxTokens' | 'snapshotEvery' | 'childRuns' | 'lang' | 'limits'> & {
  crash: CrashSpec;
};

/** What the process was given for itself, checked: what the driver's parts take of it. */
export interface CheckedOptions {
  /** Records between two snapshots (snapshot-policy.ts). */
  snapshotEvery: number;
  toolConcurrency: number;
  /** The most tokens the model may write in one reply. */
  maxTokens: number;
  lang: Lang;
  crash: CrashPoints;
}

/** Refuses what the process was given for itself (not pinned), before it takes the run's lock; what it takes, checked. */
export function checkPartsOptions(given: Pick<DriverOptions, 'snapshotEvery' | 'toolConcurrency' | 'maxTokens' | 'lang' | 'crash'>): CheckedOptions {
  return {
    snapshotEvery: snapshotEveryOf(given.snapshotEvery),
    toolConcurrency: toolConcurrencyOf(given.toolConcurrency),
    maxTokens: given.maxTokens ?? DEFAULT_MAX_TOKENS,
    lang: langOf(given.lang),
    crash: crashPointsOf(given.crash),
  };
}

/**
 * The driver's parts: its options (and what their check returned), with what the settings the
 * start pinned or the resume applies give it. `observer`: the caller's, traced.
 */
export function driverParts(given: DriverOptions, checked: CheckedOptions, applied: AppliedSettings, observer: RunObserver, tracing: RunTracing | null): DriverParts {
  // The process's own limits are asked after the run's: its own budget stops it first.
  const capabilities = given.limits?.length ? [...applied.capabilities, ...given.limits] : applied.capabilities;
  return {
    capabilities,
    store: given.store,
    signal: given.signal,
    model: applied.model,
    registry: applied.registry,
    crash: checked.crash,
    observer: capabilities.reduce((next, capability) => capability.observe?.(next) ?? next, observer),
    toolTimeoutMs: given.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
    toolConcurrency: checked.toolConcurrency,
    maxTokens: checked.maxTokens,
    words: wordsOf(checked.lang),
    inspect: given.inspect,
    snapshotEvery: checked.snapshotEvery,
    ...(tracing ? { traceCall: (toolUseId: string) => traceOfCall(tracing, toolUseId) } : {}),
    ...(given.childRuns ? { childRuns: given.childRuns } : {}),
    tenant: applied.tenant,
  };
}

/** How a run a call makes (a sub-agent's) is traced under the call's execute_tool span, while the call runs. */
function traceOfCall(tracing: RunTracing, toolUseId: string) {
  const parent = tracing.callContext(toolUseId);
  return parent ? { tracer: tracing.usedTracer, content: tracing.exportsContent, parent } : undefined;
}
