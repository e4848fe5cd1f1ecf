/**
 * The port through which a capability pins its settings in a run's journal header and checks a
 * resume against them. A setting that changes what the run does (the rule for decisions, the
 * compaction, the agent) belongs to the run, not to the process that happens to drive it: the
 * start writes it once, and every resume is held against it before anything is repaired.
 *
 * The runtime loops over the settings in their order and knows none of their fields, as a
 * worker's plug-ins each configure it in turn: each sees what the ones before it made (the tools
 * approval adds, the header fields pinned so far), and hands it on.
 */
import type { JournalHeader } from '../store/journal/journal-record.ts';
import type { ToolDefinition } from '../tools/tool.ts';

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
}

/**
 * What a capability pins and checks. Both refuse with the capability's own error, whose message
 * says what to do; nothing has been written then.
 */
export interface RunSetting<Given> {
  readonly name: string;
  /** A start: checks what it was given, and adds what the run keeps of it. */
  pin?(run: RunSettings, given: Given): RunSettings | Promise<RunSettings>;
  /** A resume: checks what it was given against what the run pinned, and applies the two for this process. */
  check?(run: RunSettings, given: Given): RunSettings;
}

/** A start's settings: each setting in turn pins what it keeps. */
export async function pinSettings<Given>(settings: ReadonlyArray<RunSetting<Given>>, first: RunSettings, given: Given): Promise<RunSettings> {
  let run = first;
  for (const setting of settings) if (setting.pin) run = await setting.pin(run, given);
  return run;
}

/** A resume's settings: each setting in turn checks the run's header against what it was given. */
export function checkSettings<Given>(settings: ReadonlyArray<RunSetting<Given>>, first: RunSettings, given: Given): RunSettings {
  let run = first;
  for (const setting of settings) if (setting.check) run = setting.check(run, given);
  return run;
}

/** Raises the version the run needs to `version` (never lowers it). */
export function needsVersion(run: RunSettings, version: number): RunSettings {
  return version > run.version ? { ...run, version } : run;
}
