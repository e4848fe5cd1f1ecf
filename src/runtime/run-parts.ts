/**
 * What plugs into a run, in one place: the driver's parts (the capabilities, the model as the
 * run asks it, the tools) from the driver's piece of a start's or a resume's options, and what
 * the run's settings plug in (each setting its own capability; run-settings.ts). Each part is
 * handed only what it uses; the capabilities' own fields are their settings' alone.
 */
import type { RunObserver } from '../core/run-events.ts';
import type { RunSettings } from '../core/run-settings.ts';
import { tenantOf } from '../core/tenant.ts';
import { type Lang, langOf, wordsOf } from '../lang/lang.ts';
import type { RunTracing } from '../telemetry/run-tracing.ts';
import { DEFAULT_TOOL_TIMEOUT_MS } from '../tools/execute-call.ts';
import { ToolRegistry } from '../tools/tool-registry.ts';
import { type CrashPoints, type CrashSpec, crashPointsOf } from './crash-points.ts';
import { pluggedIn, type SettingsGiven } from './pinned-settings.ts';
import type { DriverParts } from './run-driver.ts';
import { DEFAULT_MAX_TOKENS, type RunParts } from './run-options.ts';
import { snapshotEveryOf } from './snapshot-policy.ts';
import { toolConcurrencyOf } from './tool-scheduler.ts';

/**
 * What the driver's parts are made of: the options a process gives for itself, none of them
 * pinned (a resume may give others), with the store and the model as given.
 */
export type DriverOptions = Pick<RunParts, 'store' | 'model' | 'signal' | 'observer' | 'inspect' | 'toolTimeoutMs' | 'toolConcurrency' | 'maxTokens' | 'snapshotEvery' | 'childRuns' | 'lang' | 'limits'> & {
  crash: CrashSpec;
};

/** What the process was given for itself, checked: what the driver's parts take of it. */
export interface CheckedOptions {
  /** Records between two snapshots (snapshot-policy.ts). */
  snapshotEvery: number;
  toolConcurrency: number;
  lang: Lang;
  crash: CrashPoints;
}

/** Refuses what the process was given for itself (not pinned), before it takes the run's lock; what it takes, checked. */
export function checkPartsOptions(given: Pick<DriverOptions, 'snapshotEvery' | 'toolConcurrency' | 'lang' | 'crash'>): CheckedOptions {
  return { snapshotEvery: snapshotEveryOf(given.snapshotEvery), toolConcurrency: toolConcurrencyOf(given.toolConcurrency), lang: langOf(given.lang), crash: crashPointsOf(given.crash) };
}

/**
 * The driver's parts: its options (and what their check returned), with the settings the start
 * pinned or the resume applies, and what those plug in. `observer`: the caller's, traced.
 */
export function driverParts(given: DriverOptions, checked: CheckedOptions, settings: RunSettings, settingsGiven: SettingsGiven, observer: RunObserver, tracing: RunTracing | null): DriverParts {
  const registry = new ToolRegistry(settings.tools);
  const maxTokens = given.maxTokens ?? DEFAULT_MAX_TOKENS;
  const plugged = pluggedIn(settings, settingsGiven, { registry, model: given.model, maxTokens });
  // The process's own limits are asked after the run's: its own budget stops it first.
  const plugs = given.limits?.length ? { ...plugged, capabilities: [...plugged.capabilities, ...given.limits] } : plugged;
  return {
    capabilities: plugs.capabilities,
    store: given.store,
    signal: given.signal,
    model: plugs.model,
    registry,
    crash: checked.crash,
    observer: plugs.capabilities.reduce((next, capability) => capability.observe?.(next) ?? next, observer),
    toolTimeoutMs: given.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
    toolConcurrency: checked.toolConcurrency,
    maxTokens,
    words: wordsOf(checked.lang),
    inspect: given.inspect,
    snapshotEvery: checked.snapshotEvery,
    ...(tracing ? { traceCall: (toolUseId: string) => traceOfCall(tracing, toolUseId) } : {}),
    ...(given.childRuns ? { childRuns: given.childRuns } : {}),
    tenant: tenantOf(settings.pinned),
  };
}

/** How a run a call makes (a sub-agent's) is traced under the call's execute_tool span, while the call runs. */
function traceOfCall(tracing: RunTracing, toolUseId: string) {
  const parent = tracing.callContext(toolUseId);
  return parent ? { tracer: tracing.usedTracer, content: tracing.exportsContent, parent } : undefined;
}
