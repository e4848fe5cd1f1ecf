/**
 * Which compaction a run uses, decided once when it starts and pinned in the journal's header:
 * `server` (the API's compact_20260112, for models that support it), `client` (the runtime asks
 * the model for a summary of the older turns, for every other model), or `off`.
 */
import { type Model, type ModelTraits, UNKNOWN_TRAITS } from '../model/model.ts';
import type { PinnedCompaction } from '../store/journal/journal-record.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

export type CompactionMode = 'server' | 'client' | 'off';

export const COMPACTION_MODES: readonly CompactionMode[] = ['server', 'client', 'off'];

/** The programmatic option (run-api's `compaction`); every field optional. */
export interface CompactionOptions {
  /** Default: server when the model says it supports it, client when a window is known, else off. */
  mode?: CompactionMode | undefined;
  /** The context window in input tokens; overrides what the model says. */
  contextWindow?: number | undefined;
  /** Compact once the input reaches this share of the window. Default: 0.8. */
  triggerRatio?: number | undefined;
}

export const DEFAULT_TRIGGER_RATIO = 0.8;
export const TRIGGER_RATIO_RANGE = { min: 0.1, max: 0.95 } as const;
export const CONTEXT_WINDOW_RANGE = { min: 1_000, max: 100_000_000 } as const;

/** Compaction asked for in a way this run cannot have; nothing was started or changed. */
export class CompactionSettingsError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'CompactionSettingsError';
  constructor(
    readonly problem: string,
    readonly advice: string,
  ) {
    super(`${problem} ${advice}`);
  }
}

export function checkCompactionOptions(options: CompactionOptions | undefined): void {
  if (!options) return;
  const { mode, contextWindow, triggerRatio } = options;
  if (mode !== undefined && !COMPACTION_MODES.includes(mode)) {
    throw new CompactionSettingsError(`compaction mode ${JSON.stringify(mode)} is not one of server, client, off.`, 'Nothing was started.');
  }
  if (contextWindow !== undefined && !(Number.isSafeInteger(contextWindow) && contextWindow >= CONTEXT_WINDOW_RANGE.min && contextWindow <= CONTEXT_WINDOW_RANGE.max)) {
    throw new CompactionSettingsError(
      `contextWindow must be a whole number of tokens from ${CONTEXT_WINDOW_RANGE.min} to ${CONTEXT_WINDOW_RANGE.max} (got ${String(contextWindow)}).`,
      'Nothing was started.',
    );
  }
  if (triggerRatio !== undefined && !(typeof triggerRatio === 'number' && triggerRatio >= TRIGGER_RATIO_RANGE.min && triggerRatio <= TRIGGER_RATIO_RANGE.max)) {
    throw new CompactionSettingsError(
      `triggerRatio must be from ${TRIGGER_RATIO_RANGE.min} to ${TRIGGER_RATIO_RANGE.max} (got ${String(triggerRatio)}).`,
      'Nothing was started.',
    );
  }
}

/** What the model says of itself; a model that could not say (ModelLookupError) starts nothing on a guess. */
export async function traitsOf(model: Model): Promise<ModelTraits> {
  return model.traits ? await model.traits() : UNKNOWN_TRAITS;
}

/** The compaction a new run pins (null: off), from the options and what the model says. */
export async function compactionForStart(options: CompactionOptions | undefined, model: Model): Promise<PinnedCompaction | null> {
  checkCompactionOptions(options);
  const mode = options?.mode;
  if (mode === 'off') return null;
  const traits = mode === undefined || options?.contextWindow === undefined || mode === 'server' ? await traitsOf(model) : UNKNOWN_TRAITS;
  const contextWindow = options?.contextWindow ?? traits.contextWindow;
  const triggerRatio = options?.triggerRatio ?? DEFAULT_TRIGGER_RATIO;
  if (mode === 'server' && !traits.serverCompaction && !model.traits) {
    throw new CompactionSettingsError(
      `Server compaction needs a Claude model through the Anthropic API; ${model.name} is not one.`,
      'Use --compact client (with --context-window N), or --compact off. Nothing was started.',
    );
  }
  const chosen = mode ?? (traits.serverCompaction ? 'server' : contextWindow !== null ? 'client' : null);
  if (chosen === null) return null;
  if (contextWindow === null) {
    throw new CompactionSettingsError(
      `--compact ${chosen} needs the model's context window, and ${model.name} does not say what it is.`,
      'Give it with --context-window N (input tokens). Nothing was started.',
    );
  }
  return { mode: chosen, contextWindow, triggerRatio };
}

/**
 * The compaction a resume applies: the pinned one, with the window and trigger given now (for
 * this process). Another mode than the pinned one is refused: the journal's version and what it
 * holds (compaction blocks, summaries) follow the mode the run started with.
 */
export function compactionForResume(pinned: PinnedCompaction | undefined, options: CompactionOptions | undefined, location: string): PinnedCompaction | null {
  checkCompactionOptions(options);
  const mode = options?.mode;
  if (mode !== undefined && mode !== (pinned?.mode ?? 'off')) {
    throw new CompactionSettingsError(
      `The run in ${location} was started with compaction ${pinned?.mode ?? 'off'}; a resume cannot switch it to ${mode}.`,
      `Resume without --compact (or with --compact ${pinned?.mode ?? 'off'}). Nothing was changed.`,
    );
  }
  if (!pinned) return null;
  return { ...pinned, ...(options?.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}), ...(options?.triggerRatio !== undefined ? { triggerRatio: options.triggerRatio } : {}) };
}

/** The input size at which compaction starts. */
export function triggerTokensOf(settings: PinnedCompaction): number {
  return Math.floor(settings.contextWindow * settings.triggerRatio);
}
