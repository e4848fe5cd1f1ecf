/**
 * One streamed Messages API call: the pieces of the reply go to `onStream` as they arrive, and
 * the whole message is assembled from the stream (the SDK's MessageStream) and returned.
 *
 * A stream that breaks off once it has begun (a reset connection, an `error` event such as
 * overloaded_error) is sent again from the start, like a failed request: with the same number
 * of retries and the SDK's backoff. The SDK itself retries what fails before the stream begins
 * (429, 5xx, a refused connection), honouring retry-after. Nothing of a broken-off stream is
 * kept: the listener is told to drop it (a `restart` piece), and the run records only a whole reply.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { APIUserAbortError } from '@anthropic-ai/sdk';
import type { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import type { StreamDelta } from './model.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** Every attempt's stream broke off once it had begun, and retries are used up. */
export class StreamBrokeOffError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'model';
  override readonly name = 'StreamBrokeOffError';
  constructor(
    /** What broke the last attempt off (a reset connection, an `error` event). */
    readonly reason: string,
    readonly attempts: number,
  ) {
    super(`the reply's stream broke off ${attempts === 1 ? 'once' : `${attempts} times`} (last: ${reason})`);
  }
}

export interface StreamOptions {
  /** Times a stream that broke off is sent again (the model's maxRetries). */
  maxRetries: number;
  onStream: ((delta: StreamDelta) => void) | undefined;
  /** Milliseconds to wait before retry n (0-based); default: the SDK's backoff. */
  retryDelayMs?: ((retry: number) => number) | undefined;
}

/** The SDK's backoff: 0.5 s doubling up to 8 s, less up to a quarter at random. */
export function backoffMs(retry: number): number {
  return Math.min(500 * 2 ** retry, 8_000) * (1 - Math.random() * 0.25);
}

/** One attempt's stream: the SDK's messages.stream() (or beta.messages.stream(), whose events are the same) for the request. */
export type OpenStream = () => MessageStream;

export async function streamMessage(open: OpenStream, options: StreamOptions): Promise<Anthropic.Messages.Message> {
  for (let retry = 0; ; retry++) {
    const stream = open();
    let begun = false;
    stream.on('connect', () => (begun = true));
    stream.on('streamEvent', (event) => tell(options.onStream, deltaOf(event)));
    try {
      return await stream.finalMessage();
    } catch (error) {
      if (!begun || error instanceof APIUserAbortError) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      if (retry >= options.maxRetries) throw new StreamBrokeOffError(reason, retry + 1);
      tell(options.onStream, { type: 'restart', attempt: retry + 1, reason });
      await new Promise((resolve) => setTimeout(resolve, (options.retryDelayMs ?? backoffMs)(retry)));
    }
  }
}

function deltaOf(event: Anthropic.Messages.RawMessageStreamEvent): StreamDelta | null {
  if (event.type === 'content_block_start') {
    const block = event.content_block;
    if (block.type === 'tool_use') return { type: 'tool-use', index: event.index, id: block.id, name: block.name };
    if (block.type === 'server_tool_use') return { type: 'server-tool-use', index: event.index, id: block.id, name: block.name };
    if (block.type === 'redacted_thinking') return { type: 'redacted-thinking', index: event.index };
    return null;
  }
  if (event.type !== 'content_block_delta') return null;
  if (event.delta.type === 'text_delta') return { type: 'text', index: event.index, text: event.delta.text };
  if (event.delta.type === 'thinking_delta') return { type: 'thinking', index: event.index, text: event.delta.thinking };
  if (event.delta.type === 'input_json_delta') return { type: 'tool-input', index: event.index, partialJson: event.delta.partial_json };
  return null;
}

/** A live view that throws must not break the model call: what it shows is not what the run keeps. */
function tell(onStream: StreamOptions['onStream'], delta: StreamDelta | null): void {
  if (!delta || !onStream) return;
  try {
    onStream(delta);
  } catch {
    // The view misses a piece; the reply itself is whole.
  }
}
