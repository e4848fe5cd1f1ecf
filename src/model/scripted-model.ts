/**
 * A model that needs no key and no network: its replies are scripted. The reply is chosen by
 * where the conversation stands (how many assistant messages it holds), not by how many calls
 * this process made, so a resumed process gets exactly the reply the crashed one would have.
 */
import type { ContentBlock, Message, ModelReply, TokenUsage } from '../../machines/agent-loop.types.ts';
import type { Model, ModelRequest } from './model.ts';
import { ModelCallError } from './model.ts';
import { type Pace, stepDelay } from '../util/pace.ts';
import { estimateRequestTokens } from './estimate-tokens.ts';

export type ScriptedStep = ModelReply | ((messages: readonly Message[]) => ModelReply);

export interface ScriptedModelOptions extends Pace {
  name?: string | undefined;
  /** Answers every request past the script: a finished conversation continued with a new message. */
  afterScript?: ScriptedStep | undefined;
  /**
   * A context window to emulate, in input tokens as estimated by src/model/estimate-tokens.ts:
   * a longer request is answered with stop_reason model_context_window_exceeded, as a real model stops.
   */
  contextWindow?: number | undefined;
  /** The reply to a request for a summary (client compaction); default {@link scriptedSummary}. */
  summary?: ScriptedStep | undefined;
}

export class ScriptExhaustedError extends ModelCallError {
  override readonly name = 'ScriptExhaustedError';
  constructor(
    readonly scriptLength: number,
    readonly requestedStep: number,
  ) {
    super(
      `The scripted model holds ${scriptLength} replies and was asked for reply ${requestedStep} ` +
        `(the conversation already has ${requestedStep - 1} assistant messages). ` +
        `Give the script more replies, or run with a real model (--model).`,
      null,
      false,
    );
  }
}

export function scriptedModel(steps: readonly ScriptedStep[], options: ScriptedModelOptions = {}): Model {
  const counted = new AssistantCount();
  return {
    name: options.name ?? 'scripted',
    async createMessage(request: ModelRequest): Promise<ModelReply> {
      if (options.paceMs || options.jitterMs) await stepDelay(options);
      if (options.contextWindow !== undefined && estimateRequestTokens(request.system, request.tools, request.messages) > options.contextWindow) {
        return stopReply('model_context_window_exceeded');
      }
      if (request.purpose === 'summary') {
        const summary = options.summary ?? scriptedSummary;
        return typeof summary === 'function' ? summary(request.messages) : summary;
      }
      // Replies compaction took out of the messages still count: the script goes on where it stood.
      const index = (request.earlierReplies ?? 0) + counted.in(request.messages);
      const step = steps[index] ?? options.afterScript;
      if (step === undefined) throw new ScriptExhaustedError(steps.length, index + 1);
      return typeof step === 'function' ? step(request.messages) : step;
    },
  };
}

/**
 * How many assistant messages a conversation holds, counted once: each request's messages are
 * the last request's with a few appended (the machine appends to a copy), so only those are
 * counted. Counting them all every time made a T-turn run quadratic (a fifth of a 6,000-turn
 * run's CPU). A list that is not the last one with messages appended (a compaction cut it, a
 * resume or another conversation) is counted whole.
 */
class AssistantCount {
  private first: Message | undefined;
  private last: Message | undefined;
  private length = 0;
  private count = 0;

  in(messages: readonly Message[]): number {
    const grown = this.length > 0 && messages.length >= this.length && messages[0] === this.first && messages[this.length - 1] === this.last;
    let count = grown ? this.count : 0;
    for (let i = grown ? this.length : 0; i < messages.length; i++) if (messages[i]!.role === 'assistant') count += 1;
    this.first = messages[0];
    this.last = messages[messages.length - 1];
    this.length = messages.length;
    this.count = count;
    return count;
  }
}

export interface ScriptedCall {
  id: string;
  name: string;
  input: unknown;
}

/** A reply that asks for one or more tool calls (several: parallel tool use). */
export function toolUseReply(calls: ScriptedCall[], text?: string): ModelReply {
  const content: ContentBlock[] = [];
  if (text) content.push({ type: 'text', text });
  for (const call of calls) content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.input });
  return { content, stop_reason: 'tool_use', usage: scriptedUsage(content) };
}

/** A reply that ends the turn with a final answer. */
export function endTurnReply(text: string): ModelReply {
  const content: ContentBlock[] = [{ type: 'text', text }];
  return { content, stop_reason: 'end_turn', usage: scriptedUsage(content) };
}

/** Any other reply, e.g. one that stops for max_tokens, pause_turn or refusal. */
export function stopReply(stopReason: string, text = ''): ModelReply {
  const content: ContentBlock[] = text ? [{ type: 'text', text }] : [];
  return { content, stop_reason: stopReason, usage: scriptedUsage(content) };
}

/** Deterministic, cheap token figures so usage accounting can be checked without a real model. */
function scriptedUsage(content: ContentBlock[]): TokenUsage {
  return { input: 100, output: Math.ceil(JSON.stringify(content).length / 4), cacheRead: 0, cacheWrite: 0 };
}

/**
 * The scripted model's summary (client compaction): deterministic, and short whatever it
 * summarises, naming the tool calls it replaces so that a test can tell which were summarised.
 */
export function scriptedSummary(messages: readonly Message[]): ModelReply {
  const calls = messages.flatMap((message) => (typeof message.content === 'string' ? [] : message.content.filter((block) => block.type === 'tool_use')));
  const names = [...new Set(calls.map((block) => String(block.name)))].sort();
  const first = calls[0]?.id;
  const last = calls[calls.length - 1]?.id;
  const text = `Summary of ${messages.length} messages: ${calls.length} tool calls (${names.join(', ') || 'none'})${first ? `, from ${String(first)} to ${String(last)}` : ''}.`;
  return endTurnReply(text);
}
