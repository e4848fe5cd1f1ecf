/**
 * A real Claude model through @anthropic-ai/sdk. The key comes from the caller (the CLI reads
 * ANTHROPIC_API_KEY) and lives only in the SDK client: never in a request the loop records, a
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
 */
import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError } from '@anthropic-ai/sdk';
import type { ContentBlock, Message, ModelReply, TokenUsage } from '../../machines/agent-loop.types.ts';
import { ZERO_USAGE } from '../../machines/agent-loop.types.ts';
import { redactSecrets } from '../util/redact.ts';
import type { PinnedClearToolUses } from '../store/journal-record.ts';
import type { Model, ModelRequest, ModelTraits } from './model.ts';
import { MissingApiKeyError, ModelCallError } from './model.ts';
import { StreamBrokeOffError, streamMessage } from './anthropic-stream.ts';

export interface AnthropicModelOptions {
  model: string;
  /** Default: ANTHROPIC_API_KEY from the environment (MissingApiKeyError when neither is there). */
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
}

export const DEFAULT_MAX_RETRIES = 4;
export const DEFAULT_TIMEOUT_MS = 600_000;

export function anthropicModel(given: AnthropicModelOptions): Model {
  const apiKey = given.apiKey ?? process.env['ANTHROPIC_API_KEY'];
  if (!apiKey) throw new MissingApiKeyError(given.model, 'Pass apiKey to anthropicModel, or set ANTHROPIC_API_KEY; a scripted model (durable-agent/testing) needs none.');
  const options = { ...given, apiKey };
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  const client = new Anthropic({
    apiKey: options.apiKey,
    ...(options.baseURL ? { baseURL: options.baseURL } : {}),
    maxRetries,
    timeout: options.requestTimeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  let traits: Promise<ModelTraits> | null = null;
  return {
    name: options.model,
    provider: 'anthropic',
    traits: () => (traits ??= modelTraits(client, options.model)),
    async createMessage(request: ModelRequest): Promise<ModelReply> {
      let message: Anthropic.Beta.Messages.BetaMessage;
      try {
        const params: Anthropic.Messages.MessageCreateParamsNonStreaming = {
          model: options.model,
          max_tokens: request.maxTokens,
          ...(request.system ? { system: request.system } : {}),
          ...(request.tools.length > 0 ? { tools: request.tools as unknown as Anthropic.Messages.Tool[] } : {}),
          // A summary is text: the older turns' tools stay defined (their blocks are in the request) but none is called.
          ...(request.purpose === 'summary' && request.tools.length > 0 ? { tool_choice: { type: 'none' as const } } : {}),
          messages: withCacheBreakpoint(request.messages) as unknown as Anthropic.Messages.MessageParam[],
        };
        const managed = contextManagementOf(request);
        // Server compaction and clearing go through the beta endpoint, asked whole (not streamed: the live view then shows the reply once it is whole).
        message = managed
          ? await client.beta.messages.create({ ...params, ...managed } as Anthropic.Beta.Messages.MessageCreateParamsNonStreaming)
          : ((options.stream === false
              ? await client.messages.create(params)
              : await streamMessage(client, params, { maxRetries, onStream: request.onStream, retryDelayMs: options.streamRetryDelayMs })) as unknown as Anthropic.Beta.Messages.BetaMessage);
      } catch (error) {
        // Too long for the window: the run stops as for the model's own stop reason (exit 6), not as an outage.
        if (isPromptTooLong(error)) return { content: [], stop_reason: 'model_context_window_exceeded', usage: { ...ZERO_USAGE }, model: options.model };
        throw toModelCallError(error, options.model, options.apiKey);
      }
      // Passed on as received, whatever its shape: the runtime checks every reply (reply-check.ts),
      // refusing content blocks that are not blocks and counting token figures that are missing as 0.
      const usage = message.usage as Partial<Anthropic.Beta.Messages.BetaUsage> | null | undefined;
      return {
        content: Array.isArray(message.content) ? (message.content as unknown as ContentBlock[]).map(withoutNulls) : message.content,
        stop_reason: message.stop_reason,
        usage: (usage ? withCompactionUsage(usage) : undefined) as TokenUsage,
        model: message.model,
      };
    },
  };
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

/** The model's window and whether it can compact server-side, from the Models API. */
async function modelTraits(client: Anthropic, model: string): Promise<ModelTraits> {
  // Asked once per run start; a gateway without the Models API just leaves the defaults to the flags.
  const info = await client.models.retrieve(model, {}, { maxRetries: 0, timeout: 15_000 });
  const compact = info.capabilities?.context_management?.compact_20260112;
  return { contextWindow: typeof info.max_input_tokens === 'number' ? info.max_input_tokens : null, serverCompaction: compact?.supported === true };
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
    const last = blocks[blocks.length - 1];
    if (!last) return copy;
    blocks[blocks.length - 1] = { ...last, cache_control: { type: 'ephemeral' } };
    copy[i] = { role: 'user', content: blocks };
    return copy;
  }
  return copy;
}

/**
 * The API returns optional fields as null (e.g. a text block's citations); they are not sent back.
 * A compaction block is the exception: it goes back exactly as it came (its nulls included).
 */
function withoutNulls(block: ContentBlock): ContentBlock {
  if (block === null || typeof block !== 'object' || block.type === 'compaction') return block;
  const entries = Object.entries(block).filter(([, value]) => value !== null && value !== undefined);
  return Object.fromEntries(entries) as ContentBlock;
}

/**
 * The SDK's error in words a user can act on. A gateway may echo the request's headers (the key
 * among them) in its error body: the key this model was given is taken out, as is anything
 * shaped like a key, even when it did not come from the environment.
 */
export function toModelCallError(error: unknown, model: string, apiKey?: string): ModelCallError {
  const built = describeCallError(error, model);
  return new ModelCallError(redactSecrets(built.message, [apiKey]), built.status, built.transient);
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
