/**
 * The port through which a capability pins its settings in a run's journal header (or its
 * context), checks a resume against them, and plugs itself into the process that drives the
 * run. A setting that changes what the run does (the rule for decisions, the
 * compaction, the agent) belongs to the run, not to the process that happens to drive it: the
 * start writes it once, and every resume is held against it before anything is repaired.
 *
 * Each setting is given its own piece of a start's or a resume's options, under its name, and no
 * more. The runtime loops over the settings in their order and knows none of their fields, as a
 * worker's plug-ins each configure it in turn: each sees what the ones before it made (the tools
 * approval adds, the header fields pinned so far, the model as the run asks it), and hands it on.
 */
import type { AgentContext, AgentEvent, AgentInput } from '../../machines/agent-loop.types.ts';
import type { Model } from '../model/model.ts';
import type { JournalHeader } from '../store/journal/journal-record.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';
import type { Capability } from './session.ts';

/** The header's fields a setting may own: all but the journal's own. */
export type PinnedFields = Partial<Omit<JournalHeader, 'format' | 'version' | 'runId' | 'createdAt'>>;

/** A run's settings, as the settings work them out one after another. */
export interface RunSettings {
  /** Where the run is kept: for the messages. */
  readonly location: string;
  /** The tools the run offers the model: those given, and any a setting offers (approval's ask_user). */
  readonly tools: readonly ToolDefinition[];
  /** At a start: the fields pinned so far. At a resume: the run's header, as this process applies it. */
  readonly pinned: PinnedFields;
  /**
   * At a start: the oldest journal version whose readers understand what is pinned (a release
   * before it would misread the run, so the version makes it refuse the run instead).
   */
  readonly version: number;
  /**
   * At a start: what the settings keep in the run's context instead of its header (the budget:
   * the header is written once, and a resume may change it), for the machine's input.
   */
  readonly input?: InContext | undefined;
  /**
   * At a resume: a setting accepts that the command or the tools differ from those that started
   * the run, as allowToolChange would (an agent that declares the run's version compatible).
   */
  readonly toolChangeAccepted?: boolean | undefined;
}

/** What a setting may keep in the run's context: the machine's input fields that are no task's. */
export type InContext = Pick<AgentInput, 'budget' | 'costUsd'>;

/** What a setting may change in the run's context when a resume reopens it: the REOPEN event's fields that are its. */
export type ContextChange = Pick<Extract<AgentEvent, { type: 'REOPEN' }>, 'budget'>;

/** What the runtime offers a setting that plugs into the run: the run's tools, the model, the size of a reply. */
export interface PlugParts {
  readonly registry: ToolRegistry;
  /** The model as the settings before this one left it (as given, unless one wraps it). */
  readonly model: Model;
  /** The most tokens the model may write in one reply. */
  readonly maxTokens: number;
}

/** What a setting plugs into the run: a capability of its session, and the model wrapped for what it pinned. */
export interface Plugged {
  capability?: Capability | undefined;
  /** The model as the run asks it from now on (with the context edits the run pinned, say). */
  model?: Model | undefined;
}

/**
 * What a capability pins and checks, and what it plugs into the process that drives the run.
 * `Given`: its own piece of the options. Pin and check refuse with the capability's own error,
 * whose message says what to do; nothing has been written then.
 */
export interface RunSetting<Given> {
  /** A start: checks what it was given, and adds what the run keeps of it. */
  pin?(run: RunSettings, given: Given): RunSettings | Promise<RunSettings>;
  /** A resume: checks what it was given against what the run pinned, and applies the two for this process. */
  check?(run: RunSettings, given: Given): RunSettings;
  /** The process that drives the run: what the setting plugs into it, from what the run applies. */
  plug?(run: RunSettings, given: Given, parts: PlugParts): Plugged;
  /** A resume, once the run is loaded: what it changes of what it keeps in the run's context (nothing: null). */
  reopen?(context: AgentContext, given: Given): ContextChange | null;
}

/**
 * A run's settings by name, each given the piece of the options under its name: `Given` names
 * every piece. They are worked out in the order they are written.
 */
export type RunSettingsOf<Given> = { readonly [Name in keyof Given]: RunSetting<Given[Name]> };

function namesOf<Given>(settings: RunSettingsOf<Given>): (keyof Given)[] {
  return Object.keys(settings) as (keyof Given)[];
}

/** A start's settings: each setting in turn pins what it keeps of its piece. */
export async function pinSettings<Given>(settings: RunSettingsOf<Given>, first: RunSettings, given: Given): Promise<RunSettings> {
  let run = first;
  for (const name of namesOf(settings)) run = await pinOne(settings, name, run, given);
  return run;
}

function pinOne<Given, Name extends keyof Given>(settings: RunSettingsOf<Given>, name: Name, run: RunSettings, given: Given): RunSettings | Promise<RunSettings> {
  return settings[name].pin?.(run, given[name]) ?? run;
}

/** A resume's settings: each setting in turn checks the run's header against its piece. */
export function checkSettings<Given>(settings: RunSettingsOf<Given>, first: RunSettings, given: Given): RunSettings {
  let run = first;
  for (const name of namesOf(settings)) run = checkOne(settings, name, run, given);
  return run;
}

function checkOne<Given, Name extends keyof Given>(settings: RunSettingsOf<Given>, name: Name, run: RunSettings, given: Given): RunSettings {
  return settings[name].check?.(run, given[name]) ?? run;
}

/** What the settings plug into the run, in their order: the capabilities, and the model as the run asks it. */
export function plugSettings<Given>(settings: RunSettingsOf<Given>, run: RunSettings, given: Given, parts: PlugParts): { capabilities: Capability[]; model: Model } {
  const capabilities: Capability[] = [];
  let model = parts.model;
  for (const name of namesOf(settings)) {
    const plugged = plugOne(settings, name, run, given, { ...parts, model });
    if (plugged?.capability) capabilities.push(plugged.capability);
    model = plugged?.model ?? model;
  }
  return { capabilities, model };
}

function plugOne<Given, Name extends keyof Given>(settings: RunSettingsOf<Given>, name: Name, run: RunSettings, given: Given, parts: PlugParts): Plugged | undefined {
  return settings[name].plug?.(run, given[name], parts);
}

/** What a resume changes in the run's context, every setting's change together; null when none changes anything. */
export function reopenSettings<Given>(settings: RunSettingsOf<Given>, context: AgentContext, given: Given): ContextChange | null {
  const changes = namesOf(settings).flatMap((name) => reopenOne(settings, name, context, given) ?? []);
  return changes.length > 0 ? Object.assign({}, ...changes) : null;
}

function reopenOne<Given, Name extends keyof Given>(settings: RunSettingsOf<Given>, name: Name, context: AgentContext, given: Given): ContextChange | null {
  return settings[name].reopen?.(context, given[name]) ?? null;
}

/** Raises the version the run needs to `version` (never lowers it). */
export function needsVersion(run: RunSettings, version: number): RunSettings {
  return version > run.version ? { ...run, version } : run;
}
