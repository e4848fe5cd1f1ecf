/**
 * A real Claude model through @anthropic-ai/sdk. The key comes from the caller (the CLI reads
 * ANTHROPIC_API_KEY) and lives only in the client object: never in a request the loop
 * records, a checkpoint, a log line or an error message.
 */
import Anthropic, { APIConnectionError, APIError } from '@anthropic-ai/sdk';
import type { ContentBlock, ModelReply } from '../../machines/agent-loop.types.ts';
import type { Model, ModelRequest } from './model.ts';
import { ModelCallError } from './model.ts';

export interface AnthropicModelOptions {
  model: string;
  apiKey: string;
  baseURL?: string;
  /** Retries the SDK makes on 408/409/429/5xx and connection errors, with backoff honouring retry-after. */
  maxRetries?: number;
  /** Per-request time limit in milliseconds. */
  timeoutMs?: number;
}

export const DEFAULT_MAX_RETRIES = 4;
export const DEFAULT_TIMEOUT_MS = 120_000;

export function anthropicModel(options: AnthropicModelOptions): Model {
  const client = new Anthropic({
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  return {
    name: options.model,
    async createMessage(request: ModelRequest): Promise<ModelReply> {
      let message;
      try {
        message = await client.messages.create({
          model: options.model,
          max_tokens: request.maxTokens,
          ...(request.system ? { system: request.system } : {}),
          ...(request.tools.length > 0 ? { tools: request.tools as Anthropic.Messages.Tool[] } : {}),
          messages: request.messages as Anthropic.Messages.MessageParam[],
        });
      } catch (error) {
        throw toModelCallError(error, options.model);
      }
      const usage = message.usage;
      return {
        content: message.content as unknown as ContentBlock[],
        stop_reason: message.stop_reason,
        usage: {
          input: usage.input_tokens ?? 0,
          output: usage.output_tokens ?? 0,
          cacheRead: usage.cache_read_input_tokens ?? 0,
          cacheWrite: usage.cache_creation_input_tokens ?? 0,
        },
        model: message.model,
      };
    },
  };
}

function toModelCallError(error: unknown, model: string): ModelCallError {
  if (error instanceof APIConnectionError) {
    return new ModelCallError(`Could not reach the Anthropic API for ${model}: ${error.message}. The run is saved; resume it when the network is back.`, null, true);
  }
  if (error instanceof APIError) {
    const status = typeof error.status === 'number' ? error.status : null;
    const transient = status === null || status === 408 || status === 409 || status === 429 || status >= 500;
    const advice = transient
      ? 'Retries are used up; the run is saved: resume it later.'
      : 'This will not go away by retrying: fix the request (model name, key, permissions), then resume.';
    return new ModelCallError(`The Anthropic API answered ${status ?? 'with an error'} for ${model}: ${error.message}. ${advice}`, status, transient);
  }
  return new ModelCallError(`The model call for ${model} failed: ${error instanceof Error ? error.message : String(error)}`, null, false);
}
