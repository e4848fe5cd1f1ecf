/**
 * Compaction and tool result clearing: pinned with the run when it starts (a resume keeps them;
 * the clearing numbers a resume gives replace the pinned ones).
 */
import type { ClearToolUsesOptions } from '../../compaction/clear-tool-uses.ts';
import type { CompactionMode, CompactionOptions } from '../../compaction/compaction-settings.ts';
import { UsageError } from '../usage-error.ts';
import { option, type ValuesOf } from './option.ts';
import { shorten } from './read-options.ts';

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export const compact = option({
  key: 'compact',
  type: 'string',
  value: 'MODE',
  help: 'server (the API compacts: compact_20260112), client (the model summarises the older turns) or off; pinned with the run (a resume keeps it)',
  defaultText: 'server if the model supports it, else client if its window is known, else off',
  api: 'compaction.mode',
});
export const contextWindow = option({
  key: 'contextWindow',
  type: 'integer',
  value: 'N',
  help: "the model's context window in input tokens, overriding what the model says (compaction triggers from it)",
  min: 1_000,
  max: 100_000_000,
  defaultText: "the model's, from the Models API",
  api: 'compaction.contextWindow',
});
export const compactTriggerRatio = option({
  key: 'compactTriggerRatio',
  type: 'ratio',
  value: 'R',
  help: 'compact once the input reaches this share of the context window',
  min: 0.1,
  max: 0.95,
  defaultText: '0.8',
  api: 'compaction.triggerRatio',
  aliases: [{ flag: 'compact-trigger' }],
});

/** Tool result clearing (clear_tool_uses_20250919), with a Claude model. */
export const clearToolUses = option({
  key: 'clearToolUses',
  type: 'boolean',
  help: 'have the API clear old tool results from what the model reads (clear_tool_uses_20250919, before compaction); the journal keeps them all; pinned with the run',
  api: 'clearToolUses',
});
export const clearTriggerTokens = option({
  key: 'clearTriggerTokens',
  type: 'integer',
  value: 'N',
  help: 'with --clear-tool-uses: clear once the input reaches N tokens',
  min: 1_000,
  max: 100_000_000,
  defaultText: 'half the context window, else 100000',
  api: 'clearToolUses.triggerTokens',
  aliases: [{ flag: 'clear-trigger' }],
});
export const clearKeep = option({
  key: 'clearKeep',
  type: 'integer',
  value: 'N',
  help: 'with --clear-tool-uses: the N most recent tool uses stay whole',
  min: 0,
  max: 10_000,
  defaultText: '3',
  api: 'clearToolUses.keep',
});
export const clearAtLeast = option({
  key: 'clearAtLeast',
  type: 'integer',
  value: 'N',
  help: 'with --clear-tool-uses: clear only when at least N tokens go (each clearing costs the prompt cache)',
  min: 1_000,
  max: 100_000_000,
  api: 'clearToolUses.clearAtLeast',
});
export const clearExcludeTools = option({
  key: 'clearExcludeTools',
  type: 'string',
  value: 'TOOLS',
  help: 'with --clear-tool-uses: tools whose results are never cleared (names separated by commas)',
  api: 'clearToolUses.excludeTools',
  aliases: [{ flag: 'clear-exclude' }],
});
export const clearToolInputs = option({
  key: 'clearToolInputs',
  type: 'boolean',
  help: "with --clear-tool-uses: clear the calls' inputs too, not only their results",
  api: 'clearToolUses.clearToolInputs',
  aliases: [{ flag: 'clear-inputs' }],
});

export const compactionOptions = [compact, contextWindow, compactTriggerRatio, clearToolUses, clearTriggerTokens, clearKeep, clearAtLeast, clearExcludeTools, clearToolInputs] as const;

export interface CompactionArgs {
  /** Undefined: none of --compact, --context-window, --compact-trigger-ratio given. */
  compaction: CompactionOptions | undefined;
  /** Undefined: no --clear-* option given. */
  clearToolUses: ClearToolUsesOptions | undefined;
}

export function readCompaction(values: ValuesOf<typeof compactionOptions>): CompactionArgs {
  const mode = values.compact;
  if (mode !== undefined && mode !== 'server' && mode !== 'client' && mode !== 'off') {
    throw new UsageError(`--compact takes server, client or off, not "${shorten(mode)}".`);
  }
  const compaction: CompactionOptions = {};
  if (mode !== undefined) compaction.mode = mode as CompactionMode;
  if (values.contextWindow !== undefined) compaction.contextWindow = values.contextWindow;
  if (values.compactTriggerRatio !== undefined) compaction.triggerRatio = values.compactTriggerRatio;
  return { compaction: Object.keys(compaction).length > 0 ? compaction : undefined, clearToolUses: readClearToolUses(values) };
}

/** Any --clear-* option asks for clearing, as --clear-tool-uses does (the numbers alone: a resume's new ones). */
function readClearToolUses(values: ValuesOf<typeof compactionOptions>): ClearToolUsesOptions | undefined {
  const exclude = values.clearExcludeTools;
  const excludeTools = exclude?.split(',').map((name) => name.trim());
  if (excludeTools?.some((name) => !TOOL_NAME.test(name))) {
    throw new UsageError(`--clear-exclude-tools takes tool names separated by commas (read_file,list_files), not "${shorten(exclude!)}".`);
  }
  const clearing: ClearToolUsesOptions = {};
  if (values.clearTriggerTokens !== undefined) clearing.triggerTokens = values.clearTriggerTokens;
  if (values.clearKeep !== undefined) clearing.keep = values.clearKeep;
  if (values.clearAtLeast !== undefined) clearing.clearAtLeast = values.clearAtLeast;
  if (excludeTools !== undefined) clearing.excludeTools = excludeTools;
  if (values.clearToolInputs) clearing.clearToolInputs = true;
  return values.clearToolUses || Object.keys(clearing).length > 0 ? clearing : undefined;
}
