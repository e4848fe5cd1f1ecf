/**
 * The request options and price a command makes its Claude model with. A new run takes what it
 * is given, and the run pins it (JournalHeader.request, .price). A resume, and a start that
 * picks up the stored run of its --run ID, take the pinned ones: what it gives besides must be
 * the same, else it is refused (RequestOptionsChangedError, exit 2) unless --allow-request-change,
 * which changes them for this process only (the header is written once). A price given again
 * replaces the pinned one for this process: a price is a fact about the bill, not the run.
 */
import { StoreMissingError } from '../store/errors.ts';
import type { JournalHeader, PinnedRequest } from '../store/journal/journal-record.ts';
import { RequestOptionsChangedError, requestDifferences, requestOptionsOf, requestWords, withGiven } from '../model/pinned-request.ts';
import type { ModelPrice } from '../model/prices.ts';
import { checkRequestAgainst, checkRequestOptions, type ClaudeRequestOptions } from '../model/request-options.ts';
import { serverToolWords, type ServerTools } from '../model/server-tools.ts';
import { DEFAULT_MAX_TOKENS } from '../runtime/run-api.ts';
import type { ClaudeArgs } from './options/model.ts';
import { fileStoreOf } from './run-store.ts';

export interface ModelSetup {
  /** What the model is made with (realModel's `claude`). */
  options: ClaudeRequestOptions & { price?: ModelPrice };
  /** Lines for stderr: a change forced on a resume, a price replaced. */
  notes: string[];
  /** Words a resume command needs to ask the same way again (a forced change), else none. */
  resumeWords: string[];
}

export interface StoredRun {
  header: JournalHeader;
  location: string;
}

/**
 * The stored run a command goes on with: for a resume (StoreMissingError when there is none),
 * or a start under the --run ID of a run the store holds (it attaches to it; null otherwise).
 */
export async function storedRunOf(dir: string, runId: string | null, resume: boolean, fresh: boolean): Promise<StoredRun | null> {
  if (!resume && (runId === null || fresh)) return null;
  const store = fileStoreOf(dir, runId);
  try {
    if (!resume && !(await store.exists())) return null;
    const { header } = await store.load({ fromLastSnapshot: true });
    return header.runId === runId || resume ? { header, location: store.location } : null;
  } catch (error) {
    // Said as the resume itself would say it: there is nothing to pick up.
    if (error instanceof StoreMissingError) throw new StoreMissingError(error.location, 'resume');
    throw error;
  } finally {
    store.close();
  }
}

/** `toolNames`: the run's tools, when known yet (a --tool-choice tool:NAME must be one of them; checkToolsFor checks it later). */
export function modelSetupOf(model: string, claude: ClaudeArgs | undefined, stored: StoredRun | null, maxTokens: number | undefined, toolNames: readonly string[] | null): ModelSetup {
  const given = claude?.request ?? {};
  const notes: string[] = [];
  let resumeWords: string[] = [];
  let request: PinnedRequest | undefined;
  let price = claude?.price;
  if (!stored) {
    request = withGiven(undefined, given);
  } else {
    const { header, location } = stored;
    const differences = requestDifferences(header.request, given);
    if (differences.length > 0 && !claude?.allowRequestChange) throw new RequestOptionsChangedError(location, header.request, given, differences);
    request = withGiven(header.request, given);
    if (differences.length > 0) {
      notes.push(`[resume] going on with --allow-request-change: ${differences.join('; ')}, for this process (the run keeps ${requestWords(header.request)})`);
      resumeWords = [...flagWords(request), '--allow-request-change'];
    }
    if (price && header.price && JSON.stringify(price) !== JSON.stringify(header.price)) notes.push('[resume] --price replaces the price the run was started with, for this process');
    price ??= header.price;
  }
  const options = { ...requestOptionsOf(request), ...(price ? { price } : {}) };
  // Before anything is written: what the API would refuse of them, with this run's max_tokens and tools.
  if (toolNames) checkToolsFor(model, options, maxTokens, toolNames);
  else checkRequestOptions(model, options, maxTokens ?? DEFAULT_MAX_TOKENS);
  return { options, notes, resumeWords };
}

/** What the API would refuse of the options with these tools (a forced tool the run does not offer). */
export function checkToolsFor(model: string, options: ClaudeRequestOptions, maxTokens: number | undefined, toolNames: readonly string[]): void {
  checkRequestAgainst(model, options, maxTokens ?? DEFAULT_MAX_TOKENS, toolNames);
}

/** The command line's words for the options, to ask the same way again (the API-only ones have none). */
function flagWords(request: PinnedRequest | undefined): string[] {
  const words: string[] = [];
  const thinking = request?.thinking;
  words.push('--thinking', thinking === undefined || thinking.type === 'disabled' ? 'off' : thinking.type === 'enabled' ? String(thinking.budget_tokens) : thinking.type);
  if (request?.apiVersion) words.push('--api-version', request.apiVersion);
  if (request?.temperature !== undefined) words.push('--temperature', String(request.temperature));
  if (request?.toolChoice) words.push('--tool-choice', request.toolChoice.type === 'tool' ? `tool:${request.toolChoice.name}` : request.toolChoice.type);
  if (request?.stopSequences) words.push('--stop-sequences', request.stopSequences.join(','));
  if (request?.serviceTier) words.push('--service-tier', request.serviceTier);
  words.push(...serverToolWords(request?.serverTools as ServerTools | undefined));
  return words;
}
