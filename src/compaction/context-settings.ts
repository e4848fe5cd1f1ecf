/**
 * What the run pins about its context, in one place: the compaction mode (with its window and
 * trigger) and the clearing of old tool results. Worked out once when the run starts, and once
 * when it is resumed (checked against the journal's header before anything is repaired); then
 * plugged into the process that drives the run: client compaction as a capability, the server's
 * edits on every model call.
 */
import { needsVersion, type PinnedFields, type RunSetting } from '../core/run-settings.ts';
import { JOURNAL_VERSION_COMPACTION, type PinnedClearToolUses, type PinnedCompaction } from '../store/journal/journal-record.ts';
import type { Model } from '../model/model.ts';
import { type ClearToolUsesOptions, clearToolUsesForResume, clearToolUsesForStart, withClearToolUses } from './clear-tool-uses.ts';
import { type CompactionOptions, compactionForResume, compactionForStart, triggerTokensOf } from './compaction-settings.ts';
import { ContextCompaction } from './context-compaction.ts';
import { withServerCompaction } from './server-compaction.ts';

export interface ContextSettings {
  compaction: PinnedCompaction | null;
  clearing: PinnedClearToolUses | null;
}

export interface ContextOptions {
  compaction?: CompactionOptions | undefined;
  clearToolUses?: ClearToolUsesOptions | boolean | undefined;
}

/** What the context setting is given: the options, and the model whose window and support they are worked out for. */
export interface ContextGiven extends ContextOptions {
  model: Model;
}

/**
 * The context as a setting of the run: pinned when it starts (a journal that may hold compaction
 * blocks or summaries is version 3); a resume may change the numbers, not the mode, nor turn
 * clearing on or off (CompactionSettingsError).
 */
export const contextSetting: RunSetting<ContextGiven> = {
  async pin(run, given) {
    const { compaction, clearing } = await contextSettingsForStart(given, given.model, run.tools.map((tool) => tool.name));
    if (!compaction && !clearing) return run;
    const pinned = { ...run.pinned, ...(compaction ? { compaction } : {}), ...(clearing ? { clearToolUses: clearing } : {}) };
    return needsVersion({ ...run, pinned }, JOURNAL_VERSION_COMPACTION);
  },
  check(run, given) {
    const { compaction, clearing } = contextSettingsForResume(run.pinned, given, run.tools.map((tool) => tool.name), run.location);
    return { ...run, pinned: { ...run.pinned, compaction: compaction ?? undefined, clearToolUses: clearing ?? undefined } };
  },
  plug(run, _given, parts) {
    const context = contextSettingsOf(run.pinned);
    // The summarising call asks the model as it is: the server's edits are for the run's own calls.
    const summary = { model: parts.model, tools: parts.registry.specs, maxTokens: parts.maxTokens };
    const client = new ContextCompaction(context.compaction?.mode === 'client' ? context.compaction : null, summary);
    return { capability: client, model: withContextEdits(parts.model, context) };
  },
};

/** The model as the run asks it: with the server's context edits the run pinned, if any. */
function withContextEdits(model: Model, { compaction, clearing }: ContextSettings): Model {
  const compacting = compaction?.mode === 'server' ? withServerCompaction(model, triggerTokensOf(compaction)) : model;
  return clearing ? withClearToolUses(compacting, clearing) : compacting;
}

/** The context settings a run applies, from its header's fields as pinned (or applied). */
export function contextSettingsOf(pinned: PinnedFields): ContextSettings {
  return { compaction: pinned.compaction ?? null, clearing: pinned.clearToolUses ?? null };
}

export async function contextSettingsForStart(options: ContextOptions, model: Model, toolNames: readonly string[]): Promise<ContextSettings> {
  const compaction = await compactionForStart(options.compaction, model);
  const clearing = await clearToolUsesForStart(options.clearToolUses, model, toolNames, compaction?.contextWindow ?? options.compaction?.contextWindow);
  return { compaction, clearing };
}

/** The pinned settings as this resume's options change them; refused (nothing written) where they may not. */
export function contextSettingsForResume(header: PinnedFields, options: ContextOptions, toolNames: readonly string[], location: string): ContextSettings {
  return {
    compaction: compactionForResume(header.compaction, options.compaction, location),
    clearing: clearToolUsesForResume(header.clearToolUses, options.clearToolUses, toolNames, location),
  };
}
