/**
 * The settings a run pins in its journal header, in the order they are worked out, and what
 * started it (its origin). A start pins each; a resume checks each against the header once,
 * before the store repairs anything, so a refused resume changes nothing.
 *
 * The order matters: the agent first (another agent's run is refused before its details are
 * compared), then the rule for decisions (it adds ask_user to the tools the later ones see); the
 * budget before the context, so that a budget reached stops the run before a compaction is asked.
 */
import type { AgentDefinition } from '../agent/agent-definition.ts';
import { decisionPolicySetting, type GivenAwaits } from '../awaits/pinned-policy.ts';
import { type BudgetGiven, budgetSetting } from '../budget/budget.ts';
import { type ContextGiven, contextSetting } from '../compaction/context-settings.ts';
import type { AgentContext } from '../../machines/agent-loop.types.ts';
import { checkSettings, type ContextChange, needsVersion, pinSettings, plugSettings, reopenSettings, type RunSetting, type RunSettings, type RunSettingsOf } from '../core/run-settings.ts';
import type { Capability } from '../core/session.ts';
import { pinnedTenant, tenantOf } from '../core/tenant.ts';
import type { Model } from '../model/model.ts';
import { type CalledBy, JOURNAL_FORMAT, type JournalHeader, JOURNAL_VERSION_CHILD_AWAITS, JOURNAL_VERSION_PLAIN, type RunOrigin, type RunTraceContext } from '../store/journal/journal-record.ts';
import { childRunCallOf } from '../tools/child-run-call.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { ToolRegistry } from '../tools/tool-registry.ts';
import { agentSetting } from './agent-run.ts';
import { checkOrigin, type OriginCheck, runOriginOf } from './run-origin.ts';

/**
 * How the model is asked, and its price when it was given: pinned so that a resume asks and
 * counts the same way (secrets never: Model.request holds none). A program's resume gives its
 * model as it is; the CLI rebuilds it from these (cli/model-setup.ts checks a change there).
 */
const modelSetting: RunSetting<Model> = {
  pin(run, model) {
    if (!model.request && !model.price) return run;
    return { ...run, pinned: { ...run.pinned, ...(model.request ? { request: model.request } : {}), ...(model.price ? { price: { ...model.price } } : {}) } };
  },
};

/** The run and call that start a sub-agent's child run, so that status, list and pending show the tree. */
const calledBySetting: RunSetting<CalledBy | undefined> = {
  pin: (run, calledBy) => (calledBy ? { ...run, pinned: { ...run.pinned, calledBy: { runId: calledBy.runId, toolUseId: calledBy.toolUseId } } } : run),
};

/** Whose the run is: kept in its header when it is not the default tenant's; a resume keeps it. */
const tenantSetting: RunSetting<string | undefined> = {
  pin: (run, tenant) => {
    const kept = pinnedTenant(tenant);
    return kept === undefined ? run : { ...run, pinned: { ...run.pinned, tenant: kept } };
  },
};

/**
 * A run whose sub-agent calls queue their children for a fleet waits for them (needs 'child'):
 * a release before child awaits would run such a call instead of waiting, so its journal is version 4.
 * `queuesChildren`: the run queues the runs its calls make (a fleet's childRuns).
 */
const childAwaitsSetting: RunSetting<boolean> = {
  pin: (run, queuesChildren) => (queuesChildren && run.tools.some((tool) => childRunCallOf(tool)) ? needsVersion(run, JOURNAL_VERSION_CHILD_AWAITS) : run),
};

/** What each setting is given of a start's or a resume's options, under its name: its own fields, and no more. */
export interface SettingsGiven {
  agent: AgentDefinition | undefined;
  awaits: GivenAwaits;
  budget: BudgetGiven;
  context: ContextGiven;
  childAwaits: boolean;
  calledBy: CalledBy | undefined;
  tenant: string | undefined;
  model: Model;
}

const RUN_SETTINGS: RunSettingsOf<SettingsGiven> = {
  agent: agentSetting,
  awaits: decisionPolicySetting,
  budget: budgetSetting,
  context: contextSetting,
  childAwaits: childAwaitsSetting,
  calledBy: calledBySetting,
  tenant: tenantSetting,
  model: modelSetting,
};

/** A new run's settings, from the tools it was given; refused (with the setting's own error) before anything is written. */
export function pinStart(location: string, tools: readonly ToolDefinition[], given: SettingsGiven): Promise<RunSettings> {
  return pinSettings(RUN_SETTINGS, { location, tools, pinned: {}, version: JOURNAL_VERSION_PLAIN }, given);
}

/** What the settings a run applies give the process that drives it, each part its own piece. */
export interface AppliedSettings {
  /** The tools the run offers (those given, and any a setting adds). */
  registry: ToolRegistry;
  /** What the settings plug in, in their order. */
  capabilities: Capability[];
  /** The model as the run asks it (with the context edits the run pinned, say). */
  model: Model;
  /** Whose the run is (core/tenant.ts). */
  tenant: string;
}

/** The settings a start pinned or a resume applies, resolved for the process that drives the run; `maxTokens`: the most a reply may hold. */
export function appliedSettings(settings: RunSettings, given: SettingsGiven, maxTokens: number): AppliedSettings {
  const registry = new ToolRegistry(settings.tools);
  const { capabilities, model } = plugSettings(RUN_SETTINGS, settings, given, { registry, model: given.model, maxTokens });
  return { registry, capabilities, model, tenant: tenantOf(settings.pinned) };
}

/** What a resume changes in what the settings keep in the run's context (its budget), from the context loaded. */
export function reopenedSettings(context: AgentContext, given: SettingsGiven): ContextChange | null {
  return reopenSettings(RUN_SETTINGS, context, given);
}

/** The journal's own fields, what started the run and its trace, then what the settings pinned. */
export function headerOf(settings: RunSettings, run: { runId: string; createdAt: number; startedBy: RunOrigin; trace: RunTraceContext | null | undefined }): JournalHeader {
  const { runId, createdAt, startedBy, trace } = run;
  return { format: JOURNAL_FORMAT, version: settings.version, runId, createdAt, startedBy, ...(trace ? { trace } : {}), ...settings.pinned };
}

/** What a resume checked: the settings it applies, and what it found about the run's origin. */
export interface ResumeCheck {
  settings: RunSettings;
  origin: OriginCheck;
}

/** What a resume offers, to be held against what started the run. */
export interface Resuming {
  location: string;
  /** The tools given: the settings add theirs before they are compared. */
  tools: readonly ToolDefinition[];
  command: string;
  agentsModule: string | undefined;
  /** Go on although the command or the tools differ from those that started the run. */
  allowToolChange: boolean;
}

/** Holds a resume against the run's header: each setting, then the origin; throws the first refusal. */
export function checkResume(header: JournalHeader, resuming: Resuming, given: SettingsGiven): ResumeCheck {
  const settings = checkSettings(RUN_SETTINGS, { location: resuming.location, tools: resuming.tools, pinned: header, version: header.version }, given);
  const allowChange = resuming.allowToolChange || settings.toolChangeAccepted === true;
  return { settings, origin: checkOrigin(settings.location, header, originOf(resuming.command, given.model, settings, resuming.agentsModule), allowChange) };
}

/** What starts or resumes the run: its command, its model, and the tools it offers. */
export function originOf(command: string, model: Model, settings: RunSettings, agentsModule?: string): RunOrigin {
  return runOriginOf(command, model.name, settings.tools, agentsModule);
}
