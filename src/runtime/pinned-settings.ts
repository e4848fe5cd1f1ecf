/**
 * The settings a run pins in its journal header, in the order they are worked out, and what
 * started it (its origin). A start pins each; a resume checks each against the header once,
 * before the store repairs anything, so a refused resume changes nothing.
 *
 * The order matters: the agent first (another agent's run is refused before its details are
 * compared), then the rule for decisions (it adds ask_user to the tools the later ones see).
 */
import { decisionPolicySetting } from '../awaits/pinned-policy.ts';
import { budgetSetting } from '../budget/budget.ts';
import { contextSetting } from '../compaction/context-settings.ts';
import { checkSettings, needsVersion, pinSettings, type RunSetting, type RunSettings } from '../core/run-settings.ts';
import type { Model } from '../model/model.ts';
import { JOURNAL_FORMAT, type JournalHeader, JOURNAL_VERSION_CHILD_AWAITS, JOURNAL_VERSION_PLAIN, type RunOrigin, type RunTraceContext } from '../store/journal/journal-record.ts';
import { childRunCallOf } from '../tools/child-run-call.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { agentSetting, declaresCompatible } from './agent-run.ts';
import { checkOrigin, type OriginCheck, runOriginOf } from './run-origin.ts';
import type { ResumeOptions, RunParts, StartOptions } from './run-options.ts';

/**
 * How the model is asked, and its price when it was given: pinned so that a resume asks and
 * counts the same way (secrets never: Model.request holds none). A program's resume gives its
 * model as it is; the CLI rebuilds it from these (cli/model-setup.ts checks a change there).
 */
const modelSetting: RunSetting<Pick<StartOptions, 'model'>> = {
  name: 'model',
  pin(run, { model }) {
    if (!model.request && !model.price) return run;
    return { ...run, pinned: { ...run.pinned, ...(model.request ? { request: model.request } : {}), ...(model.price ? { price: { ...model.price } } : {}) } };
  },
};

/** The run and call that start a sub-agent's child run, so that status, list and pending show the tree. */
const calledBySetting: RunSetting<Pick<StartOptions, 'calledBy'>> = {
  name: 'calledBy',
  pin: (run, { calledBy }) => (calledBy ? { ...run, pinned: { ...run.pinned, calledBy: { runId: calledBy.runId, toolUseId: calledBy.toolUseId } } } : run),
};

/**
 * A run whose sub-agent calls queue their children for a fleet waits for them (needs 'child'):
 * a release before child awaits would run such a call instead of waiting, so its journal is version 4.
 */
const childAwaitsSetting: RunSetting<Pick<RunParts, 'childRuns'>> = {
  name: 'childAwaits',
  pin: (run, { childRuns }) => (childRuns && run.tools.some((tool) => childRunCallOf(tool)) ? needsVersion(run, JOURNAL_VERSION_CHILD_AWAITS) : run),
};

/** What the settings read of a start's or a resume's options: each setting its own fields, and no more. */
export type SettingsGiven = Pick<RunParts, 'agent' | 'model' | 'requireApproval' | 'allowQuestions' | 'decisionTimeoutMs' | 'budget' | 'compaction' | 'clearToolUses' | 'childRuns'> &
  Pick<StartOptions, 'calledBy'> &
  Pick<ResumeOptions, 'replaceDecisionPolicy'>;

const RUN_SETTINGS: ReadonlyArray<RunSetting<SettingsGiven>> = [agentSetting, decisionPolicySetting, contextSetting, budgetSetting, childAwaitsSetting, calledBySetting, modelSetting];

/** A new run's settings, from the tools it was given; refused (with the setting's own error) before anything is written. */
export function pinStart(location: string, tools: readonly ToolDefinition[], given: SettingsGiven): Promise<RunSettings> {
  return pinSettings(RUN_SETTINGS, { location, tools, pinned: {}, version: JOURNAL_VERSION_PLAIN }, given);
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
  const allowChange = resuming.allowToolChange || declaresCompatible(header, given.agent);
  return { settings, origin: checkOrigin(settings.location, header, originOf(resuming.command, given.model, settings, resuming.agentsModule), allowChange) };
}

/** What starts or resumes the run: its command, its model, and the tools it offers. */
export function originOf(command: string, model: Model, settings: RunSettings, agentsModule?: string): RunOrigin {
  return runOriginOf(command, model.name, settings.tools, agentsModule);
}
