/**
 * The request options a run is pinned to (JournalHeader.request): those that change what the
 * model does. A resume asks the same way unless it is told otherwise, and one that gives other
 * options is refused with what differs (thinking turned on mid-way, say, fails at the API on the
 * first tool turn, and other sampling is another run's): forcing the change takes a word of its
 * own. Headers, betas, metadata, keys and clients are never pinned: they are the process's.
 */
import type { PinnedRequest } from '../store/journal/journal-record.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';
import type { ClaudeRequestOptions } from './request-options.ts';
import { normalServerTools, serverToolsBeyondFlags, serverToolWords, type ServerTools } from './server-tools.ts';

const PINNED_FIELDS = ['apiVersion', 'thinking', 'effort', 'toolChoice', 'temperature', 'topP', 'topK', 'stopSequences', 'serviceTier', 'serverTools'] as const;
type PinnedField = (typeof PINNED_FIELDS)[number];

/** What a resume gives: a field present is given (thinking null: turned off); absent: not given. */
export type GivenRequest = { [K in PinnedField]?: PinnedRequest[K] | null };

/** The options' part a run pins, or undefined when they set none of it. */
export function pinnedRequestOf(options: ClaudeRequestOptions): PinnedRequest | undefined {
  const pinned: Record<string, unknown> = {};
  for (const field of PINNED_FIELDS) if (options[field] !== undefined) pinned[field] = structuredClone(options[field]);
  // Pinned as a resume gives them: each offered tool's settings, `true` as `{}`, one left off (false) not at all.
  const serverTools = normalServerTools(options.serverTools);
  if (serverTools) pinned.serverTools = serverTools;
  else delete pinned.serverTools;
  return Object.keys(pinned).length > 0 ? (pinned as PinnedRequest) : undefined;
}

/** The pinned options as anthropicModel takes them (checked again when the model is made: a journal is read from disk). */
export function requestOptionsOf(pinned: PinnedRequest | undefined): ClaudeRequestOptions {
  return { ...(pinned as ClaudeRequestOptions | undefined) };
}

/** The pinned options with the given ones in their place (null: taken out). */
export function withGiven(pinned: PinnedRequest | undefined, given: GivenRequest): PinnedRequest | undefined {
  const merged: Record<string, unknown> = { ...pinned };
  for (const field of PINNED_FIELDS) {
    if (!(field in given)) continue;
    if (given[field] === null || given[field] === undefined) delete merged[field];
    else merged[field] = given[field];
  }
  return Object.keys(merged).length > 0 ? (merged as PinnedRequest) : undefined;
}

/** Each given option that is not the pinned one, in words: `--thinking: 4000 → adaptive`. */
export function requestDifferences(pinned: PinnedRequest | undefined, given: GivenRequest): string[] {
  const differences: string[] = [];
  for (const field of PINNED_FIELDS) {
    if (!(field in given)) continue;
    const before = pinned?.[field];
    const after = given[field] ?? undefined;
    if (canonicalJson(before) === canonicalJson(after)) continue;
    differences.push(`${FLAG_OF[field]}: ${wordsOf(field, before)} → ${wordsOf(field, after)}`);
  }
  return differences;
}

/** The options in the command line's words, for a resume's lines: `--thinking 4000 --temperature 1`. */
export function requestWords(pinned: PinnedRequest | undefined): string {
  if (!pinned) return 'none';
  return PINNED_FIELDS.filter((field) => pinned[field] !== undefined)
    .map((field) => (field === 'serverTools' ? wordsOf(field, pinned[field]) : `${FLAG_OF[field]} ${wordsOf(field, pinned[field])}`))
    .join(' ');
}

const FLAG_OF: Record<PinnedField, string> = {
  apiVersion: '--api-version',
  thinking: '--thinking',
  effort: 'effort',
  toolChoice: '--tool-choice',
  temperature: '--temperature',
  topP: 'topP',
  topK: 'topK',
  stopSequences: '--stop-sequences',
  serviceTier: '--service-tier',
  serverTools: 'server tools',
};

function wordsOf(field: PinnedField, value: unknown): string {
  if (value === undefined) return field === 'thinking' ? 'off' : field === 'apiVersion' ? 'the SDK\'s' : 'none';
  if (field === 'serverTools') {
    // The flags where the command line has them; the settings it has none for (a version, a location) as they are.
    const tools = value as ServerTools;
    const words = serverToolWords(tools).join(' ');
    return serverToolsBeyondFlags(tools).length === 0 ? words : `${words} (${JSON.stringify(tools)})`;
  }
  if (field === 'thinking') {
    const thinking = value as NonNullable<PinnedRequest['thinking']>;
    return thinking.type === 'enabled' ? String(thinking.budget_tokens) : thinking.type === 'disabled' ? 'off' : thinking.type;
  }
  if (field === 'toolChoice') {
    const choice = value as NonNullable<PinnedRequest['toolChoice']>;
    return choice.type === 'tool' ? `tool:${choice.name}` : choice.type;
  }
  if (field === 'stopSequences') return (value as string[]).map((text) => JSON.stringify(text)).join(',');
  return typeof value === 'string' || typeof value === 'number' ? String(value) : JSON.stringify(value);
}

/** JSON with each object's keys in order: the same settings given in another order are the same. */
function canonicalJson(value: unknown): string | undefined {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner === null || typeof inner !== 'object' || Array.isArray(inner) ? inner : Object.fromEntries(Object.keys(inner as object).sort().map((key) => [key, (inner as Record<string, unknown>)[key]])),
  );
}

/** A resume that gives request options other than the ones the run is pinned to; nothing was changed. */
export class RequestOptionsChangedError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'RequestOptionsChangedError';
  constructor(
    readonly location: string,
    readonly pinned: PinnedRequest | undefined,
    readonly given: GivenRequest,
    /** Each option that differs, `--thinking: 4000 → adaptive`. */
    readonly differences: string[],
  ) {
    super(
      `The run in ${location} was started with the request options ${requestWords(pinned)}; this resume changes ${differences.join('; ')}. ` +
        'It was not resumed and nothing was changed. Resume it without these options (the pinned ones apply) or with the same values; ' +
        'to change them anyway for this process, add --allow-request-change (the run keeps its pinned options for the resumes after it).',
    );
  }
}
