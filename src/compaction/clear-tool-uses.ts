/**
 * Tool result clearing (the API's context editing, clear_tool_uses_20250919): once a request's
 * input reaches a trigger, the server replaces the oldest tool results (and, if asked, the calls'
 * inputs) with a placeholder before the model reads them. It is cheaper than compaction (no
 * summary is written) and runs before it: the two edits go in one list, clearing first, so the
 * compaction trigger is measured on what clearing left.
 *
 * The clearing happens on the server only, request by request: the process keeps and sends the
 * whole conversation, and the journal keeps every tool result verbatim. Pinned in the journal's
 * header when the run starts; a resume cannot turn it on or off, and may change its numbers.
 */
import type { Model, ModelRequest } from '../model/model.ts';
import type { PinnedClearToolUses } from '../store/journal/journal-record.ts';
import { CompactionSettingsError, traitsOf } from './compaction-settings.ts';

/** The programmatic option (run-api's `clearToolUses`): true for the defaults. */
export interface ClearToolUsesOptions {
  /** Clear once the input reaches this many tokens. Default: half the context window when known, else 100000 (the API's). */
  triggerTokens?: number | undefined;
  /** The most recent tool uses kept whole. Default: 3 (the API's). */
  keep?: number | undefined;
  /** Clear only when at least this many input tokens would go (the prompt cache is lost at each clearing). */
  clearAtLeast?: number | undefined;
  /** Tools whose calls and results are never cleared (names the run offers). */
  excludeTools?: readonly string[] | undefined;
  /** Clear the calls' inputs too, not only their results. */
  clearToolInputs?: boolean | undefined;
}

export const CLEAR_TOKENS_RANGE = { min: 1_000, max: 100_000_000 } as const;
export const CLEAR_KEEP_RANGE = { min: 0, max: 10_000 } as const;
/** The API's own defaults, used when nothing better is known. */
export const DEFAULT_CLEAR_TRIGGER_TOKENS = 100_000;
export const DEFAULT_CLEAR_KEEP = 3;
/** With a known window, clearing starts at this share of it: below compaction's default (0.8), so it comes first. */
export const DEFAULT_CLEAR_TRIGGER_RATIO = 0.5;

/** The options as given: checked; null when clearing is not asked for. */
export function checkClearToolUses(options: ClearToolUsesOptions | boolean | undefined, toolNames: readonly string[]): ClearToolUsesOptions | null {
  if (options === undefined || options === false) return null;
  if (options === true) return {};
  const { triggerTokens, keep, clearAtLeast, excludeTools, clearToolInputs } = options;
  const count = (value: number | undefined, range: { min: number; max: number }, what: string) => {
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= range.min && value <= range.max)) {
      throw new CompactionSettingsError(`clearToolUses.${what} must be a whole number from ${range.min} to ${range.max} (got ${String(value)}).`, 'Nothing was started or changed.');
    }
  };
  count(triggerTokens, CLEAR_TOKENS_RANGE, 'triggerTokens');
  count(keep, CLEAR_KEEP_RANGE, 'keep');
  count(clearAtLeast, CLEAR_TOKENS_RANGE, 'clearAtLeast');
  if (clearToolInputs !== undefined && typeof clearToolInputs !== 'boolean') {
    throw new CompactionSettingsError(`clearToolUses.clearToolInputs must be true or false (got ${String(clearToolInputs)}).`, 'Nothing was started or changed.');
  }
  const unknown = (excludeTools ?? []).filter((name) => !toolNames.includes(name));
  if (unknown.length > 0) {
    throw new CompactionSettingsError(
      `clearToolUses.excludeTools names ${unknown.join(', ')}, which the run does not offer (it offers ${toolNames.join(', ') || 'no tool'}).`,
      'Name tools the run offers. Nothing was started or changed.',
    );
  }
  return options;
}

function pinnedOf(options: ClearToolUsesOptions, triggerTokens: number, keep: number): PinnedClearToolUses {
  const { clearAtLeast, excludeTools, clearToolInputs } = options;
  return {
    triggerTokens,
    keep,
    ...(clearAtLeast !== undefined ? { clearAtLeast } : {}),
    ...(excludeTools?.length ? { excludeTools: [...new Set(excludeTools)] } : {}),
    ...(clearToolInputs ? { clearToolInputs: true } : {}),
  };
}

/**
 * The clearing a new run pins (null: none). It needs a Claude model through the Anthropic API;
 * `contextWindow` is the window the run knows (its compaction's, or the model's), for the default trigger.
 */
export async function clearToolUsesForStart(
  options: ClearToolUsesOptions | boolean | undefined,
  model: Model,
  toolNames: readonly string[],
  knownWindow: number | null | undefined,
): Promise<PinnedClearToolUses | null> {
  const asked = checkClearToolUses(options, toolNames);
  if (!asked) return null;
  if (!model.traits) {
    throw new CompactionSettingsError(
      `Clearing tool results (clear_tool_uses_20250919) is done by the Anthropic API; ${model.name} is not a Claude model through it.`,
      'Leave out --clear-tool-uses (clearToolUses), or use a Claude model. Nothing was started.',
    );
  }
  const contextWindow = knownWindow ?? (asked.triggerTokens === undefined ? (await traitsOf(model)).contextWindow : null);
  const triggerTokens = asked.triggerTokens ?? (contextWindow !== null ? Math.max(CLEAR_TOKENS_RANGE.min, Math.floor(contextWindow * DEFAULT_CLEAR_TRIGGER_RATIO)) : DEFAULT_CLEAR_TRIGGER_TOKENS);
  return pinnedOf(asked, triggerTokens, asked.keep ?? DEFAULT_CLEAR_KEEP);
}

/**
 * The clearing a resume applies: the pinned one, with the numbers given now (for this process).
 * Turning it on for a run started without it, or off for a run started with it, is refused.
 */
export function clearToolUsesForResume(
  pinned: PinnedClearToolUses | undefined,
  options: ClearToolUsesOptions | boolean | undefined,
  toolNames: readonly string[],
  location: string,
): PinnedClearToolUses | null {
  if (options === false && pinned) {
    throw new CompactionSettingsError(
      `The run in ${location} was started clearing old tool results (clear_tool_uses_20250919); a resume cannot turn that off.`,
      'Resume without clearToolUses: false. Nothing was changed.',
    );
  }
  const asked = checkClearToolUses(options, toolNames);
  if (asked && !pinned) {
    throw new CompactionSettingsError(
      `The run in ${location} was started without clearing tool results; a resume cannot turn it on.`,
      'Resume without --clear-tool-uses and the --clear-* options (clearToolUses). Nothing was changed.',
    );
  }
  if (!pinned) return null;
  if (!asked) return pinned;
  return pinnedOf({ ...pinned, ...definedOf(asked) }, asked.triggerTokens ?? pinned.triggerTokens, asked.keep ?? pinned.keep);
}

function definedOf(options: ClearToolUsesOptions): ClearToolUsesOptions {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as ClearToolUsesOptions;
}

/**
 * Every reply request of the run carries the clearing edit. A summary request (client
 * compaction) does not: the summary is to be written from the results themselves.
 */
export function withClearToolUses(model: Model, clearing: PinnedClearToolUses): Model {
  return {
    name: model.name,
    provider: model.provider,
    ...(model.price ? { price: model.price } : {}),
    ...(model.traits ? { traits: () => model.traits!() } : {}),
    createMessage: (request: ModelRequest) => model.createMessage(request.purpose === 'summary' ? request : { ...request, clearToolUses: clearing }),
  };
}
