/**
 * What the run pins about its context, in one place: the compaction mode (with its window and
 * trigger) and the clearing of old tool results. Worked out once when the run starts, and once
 * when it is resumed (checked against the journal's header before anything is repaired).
 */
import type { JournalHeader, PinnedClearToolUses, PinnedCompaction } from '../store/journal-record.ts';
import type { Model } from '../model/model.ts';
import { type ClearToolUsesOptions, clearToolUsesForResume, clearToolUsesForStart } from './clear-tool-uses.ts';
import { type CompactionOptions, compactionForResume, compactionForStart } from './compaction-settings.ts';

export interface ContextSettings {
  compaction: PinnedCompaction | null;
  clearing: PinnedClearToolUses | null;
}

export interface ContextOptions {
  compaction?: CompactionOptions | undefined;
  clearToolUses?: ClearToolUsesOptions | boolean | undefined;
}

export async function contextSettingsForStart(options: ContextOptions, model: Model, toolNames: readonly string[]): Promise<ContextSettings> {
  const compaction = await compactionForStart(options.compaction, model);
  const clearing = await clearToolUsesForStart(options.clearToolUses, model, toolNames, compaction?.contextWindow ?? options.compaction?.contextWindow);
  return { compaction, clearing };
}

/** The pinned settings as this resume's options change them; refused (nothing written) where they may not. */
export function contextSettingsForResume(header: JournalHeader, options: ContextOptions, toolNames: readonly string[], location: string): ContextSettings {
  return {
    compaction: compactionForResume(header.compaction, options.compaction, location),
    clearing: clearToolUsesForResume(header.clearToolUses, options.clearToolUses, toolNames, location),
  };
}
