/** What the loop needs from a model: one reply to one request. */
import type { Message, ModelReply } from '../../machines/agent-loop.types.ts';
import { redactSecrets } from '../util/redact.ts';
import type { PinnedClearToolUses, PinnedRequest } from '../store/journal/journal-record.ts';
import type { ModelPrice } from './prices.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** A tool as the request's `tools` lists it: one of ours with its schema, or one the API defines, by type. */
export type ToolSpec = CustomToolSpec | AnthropicDefinedToolSpec;

export interface CustomToolSpec {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/** An Anthropic-defined client tool (`{ type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' }`), with its type's options. */
export interface AnthropicDefinedToolSpec {
  type: string;
  name: string;
  [option: string]: unknown;
}

export interface ModelRequest {
  system: string | null;
  messages: readonly Message[];
  tools: readonly ToolSpec[];
  maxTokens: number;
  /**
   * Told each piece of the reply as it arrives, for a live view (a model that streams calls it;
   * others need not). Nothing of it is recorded: the run acts on the whole reply only.
   */
  onStream?: ((delta: StreamDelta) => void) | undefined;
  /**
   * Assistant replies compaction took out of `messages` before this request (0 or absent: none):
   * where the conversation stands is this plus the assistant messages in `messages`.
   */
  earlierReplies?: number | undefined;
  /** 'summary': client compaction asks for a summary of `messages` (no tool is to be called). */
  purpose?: 'reply' | 'summary' | undefined;
  /** Server compaction (compact_20260112): compact once the input reaches this many tokens. */
  serverCompaction?: { triggerTokens: number } | undefined;
  /** Tool result clearing (clear_tool_uses_20250919): the server clears old tool results before the model reads them. */
  clearToolUses?: PinnedClearToolUses | undefined;
  /** The code execution container of the run's earlier replies, while it lives: the request reuses it (its files and state). */
  container?: string | undefined;
  /**
   * Told what the model's provider says about the requests that a person should hear (a
   * deprecated model), once per model: the runtime reports it as a model-notice event. A model
   * asked without it says it its own way (anthropicModel: one console.warn).
   */
  onNotice?: ((notice: string) => void) | undefined;
}

/** What a model says about itself, when it can: the base of the compaction defaults. */
export interface ModelTraits {
  /** Its context window in input tokens, if known. */
  contextWindow: number | null;
  /** Whether it supports server compaction (compact_20260112). */
  serverCompaction: boolean;
}

/** What is known of a model that says nothing of itself: the flags decide. */
export const UNKNOWN_TRAITS: Readonly<ModelTraits> = Object.freeze({ contextWindow: null, serverCompaction: false });

/** A piece of a reply as it arrives. */
export type StreamDelta =
  | { type: 'text'; index: number; text: string }
  /** A tool_use block begins; its input follows in `tool-input` pieces of JSON. */
  | { type: 'tool-use'; index: number; id: string; name: string }
  | { type: 'tool-input'; index: number; partialJson: string }
  /** A piece of a thinking block's text (its signature is not a piece: it comes whole with the reply). */
  | { type: 'thinking'; index: number; text: string }
  /** A redacted_thinking block: it has no text to show (its data is encrypted). */
  | { type: 'redacted-thinking'; index: number }
  /** A server tool call begins (web search, web fetch, code execution); its input follows in `tool-input` pieces. */
  | { type: 'server-tool-use'; index: number; id: string; name: string }
  /** The stream broke off and the request is sent again: every piece before this one is void. */
  | { type: 'restart'; attempt: number; reason: string };

export interface Model {
  /** The model's name as shown to users (and sent to the API for a real model). */
  readonly name: string;
  /** Who serves it, for traces (gen_ai.provider.name): 'anthropic' for a Claude model. */
  readonly provider?: string | undefined;
  /**
   * Its list price, for a cost budget: a model of your own (a gateway, a fine-tune) names it
   * here. Otherwise the price table (src/model/prices.ts) is looked up by name.
   */
  readonly price?: ModelPrice | undefined;
  /**
   * How it is asked, where that changes what it does (thinking, sampling, tool choice…): pinned
   * in the header of a run it starts, so that a resume can ask the same way (the CLI does).
   */
  readonly request?: PinnedRequest | undefined;
  createMessage(request: ModelRequest): Promise<ModelReply>;
  /** Its window and capabilities (asked once, when a run starts with compaction left to the default). */
  traits?(): Promise<ModelTraits>;
}

/**
 * A model call that failed for good (retries, if any, are used up). The run stops; its store
 * is intact, and a resume asks again. The message is printed and may be stored: secrets an
 * endpoint echoed into it are taken out here, whatever model built it.
 */
export class ModelCallError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'model';
  override readonly name: string = 'ModelCallError';
  constructor(
    message: string,
    readonly status: number | null,
    /** Whether the same request may succeed later (rate limits, overload, network). */
    readonly transient: boolean,
  ) {
    super(redactSecrets(message));
  }
}

/**
 * The Models API could not say what a model supports, for a reason that may not last (a
 * timeout, the network, a 5xx, a rate limit, a refused key). A run whose compaction is left to
 * the default is not started on a guess: with compaction off it would fail hours later at the
 * model's window. A gateway without the Models API (404) is not this: its defaults stay with the flags.
 */
export class ModelLookupError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'model';
  override readonly name = 'ModelLookupError';
  constructor(
    readonly model: string,
    /** The API's HTTP status, or null when none came back. */
    readonly status: number | null,
    readonly problem: string,
  ) {
    super(
      redactSecrets(
        `Could not ask the Anthropic API what ${model} supports (${problem}), and the compaction a run takes by default depends on it. Nothing was started. ` +
          'Start it again later, or choose the compaction yourself: --compact server, --compact client --context-window N, or --compact off ' +
          '(programmatically: compaction: { mode, contextWindow }).',
      ),
    );
  }
}

/** A real model was asked for without a key; nothing has run. */
export class MissingApiKeyError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'MissingApiKeyError';
  constructor(
    readonly model: string,
    /** What else the user can do; the default suits the demo, where --model is optional. */
    readonly alternative = 'Without --model, the demo uses a scripted model that needs no key.',
  ) {
    super(
      `The model ${model} talks to the Anthropic API and needs ANTHROPIC_API_KEY set in the environment ` +
        `(it is read from there only and never stored). Nothing was run. ${alternative}`,
    );
  }
}
