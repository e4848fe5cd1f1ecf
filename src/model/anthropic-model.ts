/**
 * A real Claude model through @anthropic-ai/sdk. The key comes from the caller (the CLI reads
 * ANTHROPIC_API_KEY), or with the caller's own client, and lives only in the SDK client: never in a request the loop records, a
 * checkpoint, a log line or an error message.
 *
 * Retries are the SDK's: 408, 409, 429, 5xx (529 overloaded included) and dropped connections
 * and timeouts are retried with exponential backoff that honours retry-after / retry-after-ms;
 * 400, 401, 403, 404 and 413 are not. When retries run out the call fails with ModelCallError
 * and the run stops with its store intact: a resume asks again.
 *
 * Replies are streamed by default (anthropic-stream.ts): the pieces go to the request's
 * onStream as they arrive, and a stream that breaks off is sent again like a failed request.
 * `stream: false` asks for each reply whole in one response instead.
 *
 * The request options (thinking, tool choice, sampling…: request-options.ts) are checked when the
 * model is made and at each request, so what the API would refuse is refused before it is sent.
 * Thinking and compaction blocks go back exactly as they came: the API checks their signatures.
 * Extra headers and betas are the process's: never pinned with a run, recorded or printed.
 */
import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError } from '@anthropic-ai/sdk';
import type { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import type { ContentBlock, Message, ModelReply, TokenUsage } from '../../machines/agent-loop.types.ts';
import { ZERO_USAGE } from '../../machines/agent-loop.types.ts';
import { redactSecrets } from '../util/redact.ts';
import type { PinnedClearToolUses } from '../store/journal/journal-record.ts';
import type { Model, ModelRequest, ModelTraits } from './model.ts';
import { MissingApiKeyError, ModelCallError, ModelLookupError, UNKNOWN_TRAITS } from './model.ts';
import { StreamBrokeOffError, streamMessage, type StreamOptions } from './anthropic-stream.ts';
import { modelNotices, noticeOfSdkWarning, withSdkWarningsHeld } from './model-notices.ts';
import { pinnedRequestOf } from './pinned-request.ts';
import { checkModelPrice, type ModelPrice } from './prices.ts';
import { checkRequestAgainst, checkRequestOptions, type ClaudeRequestOptions, RequestOptionError, requestFieldsOf } from './request-options.ts';
import { normalServerTools, serverToolBetas, serverToolDefinitions } from './server-tools.ts';

export interface AnthropicModelOptions extends ClaudeRequestOptions {
  model: string;
  /** Default: ANTHROPIC_API_KEY from the environment (MissingApiKeyError when neither is there, unless `client` is given). */
  apiKey?: string | undefined;
  /** Another endpoint (a proxy, a gateway, a test server); default: the SDK's, or ANTHROPIC_BASE_URL as the CLI passes it. */
  baseURL?: string | undefined;
  /** Retries after the first attempt of each call (default 4). */
  maxRetries?: number | undefined;
  /** Time limit of one request to the API (each attempt), in milliseconds. Default: 600000 (10 minutes, as the SDK's). */
  requestTimeoutMs?: number | undefined;
  /** @deprecated The earlier name of requestTimeoutMs (which wins when both are given). */
  timeoutMs?: number | undefined;
  /** False: ask for each reply whole (one JSON response) instead of streaming it. Default true. */
  stream?: boolean | undefined;
  /** Milliseconds before retry n of a stream that broke off (default: the SDK's backoff, from 0.5 s). */
  streamRetryDelayMs?: ((retry: number) => number) | undefined;
  /** API betas to ask for, sent as the anthropic-beta header through the SDK's beta messages (client.beta.messages). Not pinned with a run. */
  betas?: string[] | undefined;
  /** Extra headers on every request (a gateway's own…). Never recorded or logged; their values are taken out of error messages. */
  headers?: Record<string, string> | undefined;
  /** Your own configured SDK client, used instead of one made here: its key and endpoint are its own (apiKey and baseURL are then refused). */
  client?: Anthropic | undefined;
  /**
   * The model's price in US dollars per million tokens: what a cost budget (maxCostUsd) counts
   * by, for a model the price table (src/model/prices.ts) does not know or that you pay otherwise for.
   */
  price?: ModelPrice | undefined;
}

export const DEFAULT_MAX_RETRIES = 4;
export const DEFAULT_TIMEOUT_MS = 600_000;

export function anthropicModel(given: AnthropicModelOptions): Model {
  checkRequestOptions(given.model, given);
  if (given.price !== undefined) checkModelPrice(given.model, given.price);
  if (given.client && (given.apiKey !== undefined || given.baseURL !== undefined)) {
    // The value is left out of the error: it may be the key.
    throw new RequestOptionError(given.model, 'client', undefined, 'invalid', 'a client comes with its own key and endpoint, and apiKey or baseURL was given too', 'Set them on your client, or leave client out.');
  }
  const apiKey = given.client ? undefined : (given.apiKey ?? process.env['ANTHROPIC_API_KEY']);
  if (!given.client && !apiKey) throw new MissingApiKeyError(given.model, 'Pass apiKey to anthropicModel, or set ANTHROPIC_API_KEY, or pass your own client; a scripted model (durable-agent/testing) needs none.');
  const options = { ...given };
  const timeout = options.requestTimeoutMs ?? options.timeoutMs;
  const client =
    options.client ??
    new Anthropic({
      apiKey,
      ...(options.baseURL ? { baseURL: options.baseURL } : {}),
      maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
      timeout: timeout ?? DEFAULT_TIMEOUT_MS,
    });
  const maxRetries = options.maxRetries ?? (options.client ? client.maxRetries : DEFAULT_MAX_RETRIES);
  // A client of the caller's keeps its own settings, but for the ones given here.
  const headers = { ...options.headers, ...(options.apiVersion !== undefined ? { 'anthropic-version': options.apiVersion } : {}) };
  const callOptions = {
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    ...(options.client && options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
    ...(options.client && timeout !== undefined ? { timeout } : {}),
  };
  const secrets = [apiKey, options.client?.apiKey, ...Object.values(options.headers ?? {})];
  // The server tools go after the run's own in every request (a summary's too: the blocks of their earlier calls are in it).
  const serverTools = serverToolDefinitions(normalServerTools(options.serverTools));
  const betas = [...new Set([...(options.betas ?? []), ...serverToolBetas(normalServerTools(options.serverTools))])];
  const notices = modelNotices(options.model, options.thinking?.type);
  const told = new Set<string>();
  const tell = (request: ModelRequest, notice: string) => {
    if (told.has(notice)) return;
    told.add(notice);
    if (request.onNotice) request.onNotice(notice);
    else console.warn(`[durable-agent] ${notice}`);
  };
  let traits: Promise<ModelTraits> | null = null;
  const pinned = pinnedRequestOf(options);
  return {
    name: options.model,
    provider: 'anthropic',
    ...(options.price ? { price: { ...options.price } } : {}),
    ...(pinned ? { request: pinned } : {}),
    // Asked once; a failed lookup is asked again by the next start.
    traits: () =>
      (traits ??= modelTraits(client, options.model).catch((error: unknown) => {
        traits = null;
        throw error;
      })),
    async createMessage(request: ModelRequest): Promise<ModelReply> {
      if (request.purpose !== 'summary') checkRequestAgainst(options.model, options, request.maxTokens, request.tools.map((tool) => tool.name));
      for (const notice of notices) tell(request, notice);
      // The SDK's own copy of what was just told, printed on every request, is held back (model-notices.ts).
      const held: string[] = [];
      const quietly = <T>(call: () => T): T => withSdkWarningsHeld(call, (warning) => held.push(warning));
      let message: Anthropic.Beta.Messages.BetaMessage;
      try {
        const tools = [...(request.tools as unknown as Anthropic.Messages.ToolUnion[]), ...serverTools];
        const params: Anthropic.Messages.MessageCreateParamsNonStreaming = {
          model: options.model,
          max_tokens: request.maxTokens,
          ...(request.system ? { system: request.system } : {}),
          ...(tools.length > 0 ? { tools } : {}),
          ...requestFieldsOf(options, { purpose: request.purpose, hasTools: tools.length > 0 }),
          // The code execution container the run's earlier replies used, while it lives: its files and state go on.
          ...(request.container ? { container: request.container } : {}),
          messages: withCacheBreakpoint(request.messages) as unknown as Anthropic.Messages.MessageParam[],
        };
        const managed = contextManagementOf(request);
        const allBetas = [...new Set([...(managed?.betas ?? []), ...betas])];
        // Server compaction and clearing are asked whole (not streamed: the live view then shows the reply once it is whole).
        const streamed = options.stream === false || managed ? null : { maxRetries, onStream: request.onStream, retryDelayMs: options.streamRetryDelayMs };
        message = await send(client, { params, managed, betas: allBetas, streamed, callOptions, quietly });
      } catch (error) {
        // Too long for the window: the run stops as for the model's own stop reason (exit 6), not as an outage.
        if (isPromptTooLong(error)) return { content: [], stop_reason: 'model_context_window_exceeded', usage: { ...ZERO_USAGE }, model: options.model };
        throw toModelCallError(error, options.model, secrets);
      } finally {
        for (const warning of held) {
          const notice = noticeOfSdkWarning(warning, notices);
          if (notice) tell(request, notice);
        }
      }
      // Passed on as received, whatever its shape: the runtime checks every reply (reply-check.ts),
      // refusing content blocks that are not blocks and counting token figures that are missing as 0.
      const usage = message.usage as Partial<Anthropic.Beta.Messages.BetaUsage> | null | undefined;
      const container = (message as { container?: { id?: unknown; expires_at?: unknown } | null }).container;
      return {
        content: Array.isArray(message.content) ? (message.content as unknown as ContentBlock[]).map(withoutNulls) : message.content,
        stop_reason: message.stop_reason,
        usage: (usage ? withServerToolUse(withCompactionUsage(usage), usage) : undefined) as TokenUsage,
        model: message.model,
        ...(container ? { container: { id: container.id, expires_at: container.expires_at } as NonNullable<ModelReply['container']> } : {}),
      };
    },
  };
}

interface Sending {
  params: Anthropic.Messages.MessageCreateParamsNonStreaming;
  managed: ReturnType<typeof contextManagementOf>;
  betas: string[];
  /** Null: asked whole. */
  streamed: StreamOptions | null;
  callOptions: { headers?: Record<string, string>; maxRetries?: number; timeout?: number };
  /** Runs one SDK call with its model warnings held back (model-notices.ts). */
  quietly: <T>(call: () => T) => T;
}

/** One request: through the SDK's beta messages when a beta is asked for (the anthropic-beta header), else the plain ones. */
async function send(client: Anthropic, sending: Sending): Promise<Anthropic.Beta.Messages.BetaMessage> {
  const { params, managed, betas, streamed, callOptions, quietly } = sending;
  if (betas.length > 0) {
    const beta = { ...params, ...managed, betas } as Anthropic.Beta.Messages.MessageCreateParamsNonStreaming;
    if (!streamed) return quietly(() => client.beta.messages.create(beta, callOptions));
    // The beta stream sends the same events as the plain one.
    const opened = () => quietly(() => client.beta.messages.stream(beta, callOptions) as unknown as MessageStream);
    return (await streamMessage(opened, streamed)) as unknown as Anthropic.Beta.Messages.BetaMessage;
  }
  const reply = streamed ? await streamMessage(() => quietly(() => client.messages.stream(params, callOptions)), streamed) : await quietly(() => client.messages.create(params, callOptions));
  return reply as unknown as Anthropic.Beta.Messages.BetaMessage;
}

/** The beta header of server compaction (compact_20260112). */
export const COMPACTION_BETA = 'compact-2026-01-12';

/**
 * Server compaction as the run uses it: compact at the trigger, and pause right after, so that
 * the compaction block is saved on its own (a MODEL_REPLY record) before the model goes on: a
 * reply that then fails (max_tokens) or a crash cannot lose a compaction that was paid for.
 */
export function serverCompactionOf(triggerTokens: number): Anthropic.Beta.Messages.BetaContextManagementConfig {
  return { edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: triggerTokens }, pause_after_compaction: true }] };
}

/** The beta header of context editing (clear_tool_uses_20250919). */
export const CONTEXT_EDITING_BETA = 'context-management-2025-06-27';

/**
 * Tool result clearing as the run uses it: the pinned settings in the API's words. Left out,
 * a field takes the API's default (none is left out for the trigger and keep, pinned with the run).
 */
export function clearToolUsesOf(clearing: PinnedClearToolUses): Anthropic.Beta.Messages.BetaClearToolUses20250919Edit {
  return {
    type: 'clear_tool_uses_20250919',
    trigger: { type: 'input_tokens', value: clearing.triggerTokens },
    keep: { type: 'tool_uses', value: clearing.keep },
    ...(clearing.clearAtLeast !== undefined ? { clear_at_least: { type: 'input_tokens', value: clearing.clearAtLeast } } : {}),
    ...(clearing.excludeTools?.length ? { exclude_tools: clearing.excludeTools } : {}),
    ...(clearing.clearToolInputs ? { clear_tool_inputs: true } : {}),
  };
}

/**
 * The request's context edits and their betas, or null for a plain request. The API applies
 * the edits in order: clearing first, so compaction measures (and summarises) what it left.
 */
export function contextManagementOf(request: ModelRequest): { betas: string[]; context_management: Anthropic.Beta.Messages.BetaContextManagementConfig } | null {
  const { clearToolUses, serverCompaction } = request;
  if (!clearToolUses && !serverCompaction) return null;
  const edits: NonNullable<Anthropic.Beta.Messages.BetaContextManagementConfig['edits']> = [];
  const betas: string[] = [];
  if (clearToolUses) {
    edits.push(clearToolUsesOf(clearToolUses));
    betas.push(CONTEXT_EDITING_BETA);
  }
  if (serverCompaction) {
    edits.push(...serverCompactionOf(serverCompaction.triggerTokens).edits!);
    betas.push(COMPACTION_BETA);
  }
  return { betas, context_management: { edits } };
}

/** Top-level usage leaves out what the compaction itself cost (its `compaction` iterations): counted here. */
function withCompactionUsage(usage: Partial<Anthropic.Beta.Messages.BetaUsage>): TokenUsage {
  const total: TokenUsage = {
    input: usage.input_tokens ?? 0,
    output: usage.output_tokens ?? 0,
    cacheRead: usage.cache_read_input_tokens ?? 0,
    cacheWrite: usage.cache_creation_input_tokens ?? 0,
  };
  for (const entry of Array.isArray(usage.iterations) ? usage.iterations : []) {
    if (entry?.type !== 'compaction') continue;
    total.input += entry.input_tokens ?? 0;
    total.output += entry.output_tokens ?? 0;
    total.cacheRead += entry.cache_read_input_tokens ?? 0;
    total.cacheWrite += entry.cache_creation_input_tokens ?? 0;
  }
  return total;
}

/**
 * The server tools' requests the reply reports (usage.server_tool_use), beside its tokens: what
 * a web search costs is counted by them (prices.ts). A figure left out, or 0, is not written.
 * One that is not a count is passed on as it is, for the reply check to refuse.
 */
function withServerToolUse(total: TokenUsage, usage: Partial<Anthropic.Beta.Messages.BetaUsage>): TokenUsage {
  const used = usage.server_tool_use as Record<string, unknown> | null | undefined;
  if (!used || typeof used !== 'object') return total;
  const counted: TokenUsage = { ...total };
  if (used.web_search_requests !== undefined && used.web_search_requests !== null && used.web_search_requests !== 0) counted.webSearchRequests = used.web_search_requests as number;
  if (used.web_fetch_requests !== undefined && used.web_fetch_requests !== null && used.web_fetch_requests !== 0) counted.webFetchRequests = used.web_fetch_requests as number;
  return counted;
}

/**
 * The model's window and whether it can compact server-side, from the Models API, with the
 * client's own retries and timeout (as a model call has). A gateway without the Models API, or
 * one that does not list the model (404), leaves the defaults to the flags; any other failure
 * is a ModelLookupError, and no run starts on a guess.
 */
async function modelTraits(client: Anthropic, model: string): Promise<ModelTraits> {
  let info: Awaited<ReturnType<Anthropic['models']['retrieve']>>;
  try {
    info = await client.models.retrieve(model);
  } catch (error) {
    if (error instanceof APIError && error.status === 404) return UNKNOWN_TRAITS;
    throw lookupErrorOf(error, model, client.apiKey);
  }
  const compact = info.capabilities?.context_management?.compact_20260112;
  return { contextWindow: typeof info.max_input_tokens === 'number' ? info.max_input_tokens : null, serverCompaction: compact?.supported === true };
}

function lookupErrorOf(error: unknown, model: string, apiKey: string | null): ModelLookupError {
  const said = (text: string) => redactSecrets(text, [apiKey]);
  if (error instanceof APIConnectionTimeoutError) return new ModelLookupError(model, null, 'it did not answer in time, and retries are used up; --timeout raises the limit');
  if (error instanceof APIConnectionError) return new ModelLookupError(model, null, said(`it could not be reached: ${error.message}`));
  if (error instanceof APIError) {
    const status = typeof error.status === 'number' ? error.status : null;
    return new ModelLookupError(model, status, said(`it answered ${status ?? 'with an error'}: ${apiErrorMessage(error)}`));
  }
  return new ModelLookupError(model, null, said(error instanceof Error ? error.message : String(error)));
}

/** The API's 400 for a request longer than the model's window ("prompt is too long: N tokens > M maximum"). */
export function isPromptTooLong(error: unknown): boolean {
  return error instanceof APIError && error.status === 400 && /prompt is too long/i.test(apiErrorMessage(error));
}

/**
 * Marks the end of the conversation so far as a prompt-cache breakpoint: the next request of
 * the loop (the same prefix plus one turn) reads it from the cache instead of paying for it
 * again. The breakpoint goes on the last block of the last user message (text or tool_result
 * blocks, which may carry one). The stored messages are not changed.
 */
export function withCacheBreakpoint(messages: readonly Message[]): Message[] {
  const copy = messages.slice();
  for (let i = copy.length - 1; i >= 0; i--) {
    const message = copy[i]!;
    if (message.role !== 'user') continue;
    const blocks: ContentBlock[] =
      typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content.slice();
    // A thinking block may carry no cache_control (the API refuses the request): the last block that may takes it.
    const at = blocks.findLastIndex((block) => !isThinkingBlock(block));
    if (at < 0) return copy;
    blocks[at] = { ...blocks[at]!, cache_control: { type: 'ephemeral' } };
    copy[i] = { role: 'user', content: blocks };
    return copy;
  }
  return copy;
}

/** A thinking or redacted_thinking block: its signature (or data) is checked by the API, so it goes back exactly as it came. */
export function isThinkingBlock(block: ContentBlock): boolean {
  return block !== null && typeof block === 'object' && (block.type === 'thinking' || block.type === 'redacted_thinking');
}

/**
 * The API returns optional fields as null (e.g. a text block's citations); they are not sent back.
 * Compaction and thinking blocks are the exception: the API checks them against their
 * signature, so they go back exactly as they came (their nulls included).
 */
export function withoutNulls(block: ContentBlock): ContentBlock {
  if (block === null || typeof block !== 'object' || block.type === 'compaction' || isThinkingBlock(block)) return block;
  const entries = Object.entries(block).filter(([, value]) => value !== null && value !== undefined);
  return Object.fromEntries(entries) as ContentBlock;
}

/**
 * The SDK's error in words a user can act on. A gateway may echo the request's headers (the key
 * among them) in its error body: the key this model was given is taken out, as is anything
 * shaped like a key, even when it did not come from the environment.
 */
export function toModelCallError(error: unknown, model: string, secrets?: string | readonly (string | null | undefined)[]): ModelCallError {
  const built = describeCallError(error, model);
  return new ModelCallError(redactSecrets(built.message, typeof secrets === 'string' ? [secrets] : (secrets ?? [])), built.status, built.transient);
}

function describeCallError(error: unknown, model: string): ModelCallError {
  if (error instanceof StreamBrokeOffError) {
    return new ModelCallError(`The Anthropic API's reply for ${model} broke off mid-stream: ${error.message}, and retries are used up. The run is saved: resume it later.`, null, true);
  }
  if (error instanceof APIConnectionTimeoutError) {
    return new ModelCallError(
      `The Anthropic API did not answer in time for ${model}, and retries are used up. The run is saved: resume it later (--timeout raises the limit).`,
      null,
      true,
    );
  }
  if (error instanceof APIConnectionError) {
    return new ModelCallError(
      `Could not reach the Anthropic API for ${model} (${error.message}), and retries are used up. The run is saved: resume it when the network is back.`,
      null,
      true,
    );
  }
  if (error instanceof APIError) {
    const status = typeof error.status === 'number' ? error.status : null;
    const transient = status === null || status === 408 || status === 409 || status === 429 || status >= 500;
    const apiMessage = apiErrorMessage(error);
    const advice = transient
      ? 'Retries are used up; the run is saved: resume it later.'
      : status === 401 || status === 403
        ? 'Check ANTHROPIC_API_KEY and its permissions, then resume: the run is saved.'
        : 'Retrying the same request will not help: fix it (model name, --max-tokens…), then resume: the run is saved.';
    return new ModelCallError(`The Anthropic API answered ${status ?? 'with an error'} for ${model}: ${apiMessage}. ${advice}`, status, transient);
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ModelCallError(`The model call for ${model} failed: ${message}. The run is saved: resume it after fixing the cause.`, null, false);
}

/** The API's own words ("invalid x-api-key", "overloaded"…), without the SDK's wrapping. */
function apiErrorMessage(error: APIError): string {
  const body = error.error as { error?: { message?: unknown } } | undefined;
  const inner = body?.error?.message;
  return typeof inner === 'string' && inner ? inner : error.message;
}
