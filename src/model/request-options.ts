/**
 * What a Claude request carries besides the conversation: thinking, effort, sampling, tool
 * choice, stop sequences, the service tier and metadata. What the Messages API would refuse is
 * refused here, before anything is sent: once when the model is made, and against each
 * request's max_tokens and tools when it goes out. The API's 400 would come only after the run
 * had started, worded for the API rather than for the option that caused it.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';
import { normalServerTools, serverToolNames, serverToolsProblem, type ServerToolsOption } from './server-tools.ts';

export type ThinkingOption = Anthropic.Messages.ThinkingConfigParam;
export type ToolChoiceOption = Anthropic.Messages.ToolChoice;
export type Effort = NonNullable<Anthropic.Messages.OutputConfig['effort']>;
export type ServiceTier = NonNullable<Anthropic.Messages.MessageCreateParamsNonStreaming['service_tier']>;

/** The Messages API version @anthropic-ai/sdk 1.x sends (client.js buildHeaders): it has no sampling fields. */
export const SDK_API_VERSION = '2026-10-21';
/** The version before it, which still takes temperature, top_p and top_k (and their rules with thinking). */
export const SAMPLING_API_VERSION = '2023-06-01';

/** The request options of anthropicModel, each in the SDK's shape where it has one. */
export interface ClaudeRequestOptions {
  /**
   * The Messages API version asked for (the anthropic-version header); default: the SDK's,
   * 2026-10-21, which refuses temperature, topP and topK whatever their value. '2023-06-01' is
   * the one to ask for when a run depends on them.
   */
  apiVersion?: string | undefined;
  /** `{ type: 'enabled', budget_tokens }` (at least 1024, below each request's max_tokens), `{ type: 'adaptive' }`, `{ type: 'disabled' }`. */
  thinking?: ThinkingOption | undefined;
  /** How much effort the model puts into a reply (output_config.effort). */
  effort?: Effort | undefined;
  /** auto, any, none, or `{ type: 'tool', name }`; any and tool make every reply call a tool (the run then ends at its turn limit), and do not go with thinking. */
  toolChoice?: ToolChoiceOption | undefined;
  /** 0 to 1; with thinking, only 1. Only with apiVersion '2023-06-01'. */
  temperature?: number | undefined;
  /** 0 to 1; with thinking, 0.95 to 1. Only with apiVersion '2023-06-01'. */
  topP?: number | undefined;
  /** A whole number of 1 or more; not with thinking. Only with apiVersion '2023-06-01'. */
  topK?: number | undefined;
  /** Texts that end a reply where the model writes them (stop_reason stop_sequence). */
  stopSequences?: string[] | undefined;
  /** metadata.user_id: an opaque id of the person the run works for (no name or email). */
  metadata?: { userId?: string | undefined } | undefined;
  /** auto (priority capacity when the organisation has it) or standard_only. */
  serviceTier?: ServiceTier | undefined;
  /**
   * Claude's server tools the run offers beside its own: web search, web fetch, code execution
   * (server-tools.ts), each true or its settings. Their blocks come back in the reply and go
   * back to the API as they came; their use is counted in the run's usage and cost.
   */
  serverTools?: ServerToolsOption | undefined;
}

/** Which of the API's rules a refused option breaks. */
export type RequestRule =
  | 'invalid'
  | 'sampling-not-in-api-version'
  | 'thinking-budget-too-small'
  | 'thinking-budget-not-below-max-tokens'
  | 'thinking-temperature'
  | 'thinking-top-k'
  | 'thinking-top-p'
  | 'thinking-tool-choice'
  | 'tool-choice-unknown-tool'
  | 'tool-choice-without-tools'
  | 'server-tool-unknown-type'
  | 'server-tool-domains-both'
  | 'server-tool-name-taken';

/** A request option the Messages API would refuse, alone or with another; nothing was sent. */
export class RequestOptionError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'RequestOptionError';
  constructor(
    readonly model: string,
    /** The option in anthropicModel's words (`thinking`, `temperature`…). */
    readonly option: string,
    readonly value: unknown,
    readonly rule: RequestRule,
    problem: string,
    advice: string,
  ) {
    super(`The request options for ${model} are refused: ${problem}. Nothing was sent. ${advice}`);
  }
}

const THINKING_TYPES = ['enabled', 'adaptive', 'disabled', 'between_tools'];
const TOOL_CHOICES = ['auto', 'any', 'tool', 'none'];
const EFFORTS: readonly Effort[] = ['low', 'medium', 'high', 'xhigh', 'max'];
const SERVICE_TIERS: readonly ServiceTier[] = ['auto', 'standard_only'];
/** The smallest thinking budget the API takes. */
export const MIN_THINKING_BUDGET = 1024;
const TOOL_NAME = /^[A-Za-z0-9_-]{1,128}$/;

/** Whether the options turn thinking on (any thinking but `disabled`). */
export function thinkingOn(options: ClaudeRequestOptions): boolean {
  return options.thinking !== undefined && options.thinking.type !== 'disabled';
}

/**
 * The options as the API would take them, or RequestOptionError. `maxTokens`: the max_tokens of
 * the requests to come, when known (a thinking budget must stay below it).
 */
export function checkRequestOptions(model: string, options: ClaudeRequestOptions & { headers?: Record<string, string> | undefined }, maxTokens?: number): void {
  const { thinking, toolChoice, temperature, topP, topK, stopSequences, serviceTier, effort, metadata } = options;
  const version = apiVersionOf(model, options);
  const sampling = (['temperature', 'topP', 'topK'] as const).filter((field) => options[field] !== undefined);
  if (sampling.length > 0 && version !== SAMPLING_API_VERSION) {
    const [field] = sampling;
    refused(
      model,
      field!,
      options[field!],
      'sampling-not-in-api-version',
      `${sampling.join(', ')} ${sampling.length === 1 ? 'is not a field' : 'are not fields'} of the Messages API version ${version}, which answers 400 to any value (1 included)`,
      `Leave ${sampling.length === 1 ? 'it' : 'them'} out; a run that depends on ${sampling.length === 1 ? 'it' : 'them'} can ask for the version before: apiVersion: '${SAMPLING_API_VERSION}' (--api-version ${SAMPLING_API_VERSION}).`,
    );
  }
  if (thinking !== undefined) {
    if (thinking === null || typeof thinking !== 'object' || !THINKING_TYPES.includes(thinking.type)) {
      refused(model, 'thinking', thinking, 'invalid', `thinking ${shown(thinking)} is not a thinking setting`, "Give { type: 'enabled', budget_tokens: N } (--thinking N), { type: 'adaptive' } (--thinking adaptive) or leave it out.");
    }
    if (thinking.type === 'enabled') {
      const budget = thinking.budget_tokens;
      if (!Number.isSafeInteger(budget) || budget < MIN_THINKING_BUDGET) {
        refused(model, 'thinking', thinking, 'thinking-budget-too-small', `the thinking budget ${shown(budget)} is not a whole number of ${MIN_THINKING_BUDGET} tokens or more`, `Give a budget of ${MIN_THINKING_BUDGET} or more (--thinking ${MIN_THINKING_BUDGET}), or --thinking adaptive.`);
      }
      if (maxTokens !== undefined && budget >= maxTokens) {
        refused(model, 'thinking', thinking, 'thinking-budget-not-below-max-tokens', `the thinking budget (${budget} tokens) is not below max_tokens (${maxTokens}), which the thinking counts toward`, `Raise max_tokens above it (--max-tokens ${budget + 4096}), lower the budget, or use --thinking adaptive.`);
      }
    }
  }
  if (temperature !== undefined && !inRange(temperature, 0, 1)) refused(model, 'temperature', temperature, 'invalid', `temperature ${shown(temperature)} is not from 0 to 1`, 'Give a temperature from 0 to 1.');
  if (topP !== undefined && !inRange(topP, 0, 1)) refused(model, 'topP', topP, 'invalid', `topP ${shown(topP)} is not from 0 to 1`, 'Give a topP from 0 to 1.');
  if (topK !== undefined && !(Number.isSafeInteger(topK) && topK >= 1)) refused(model, 'topK', topK, 'invalid', `topK ${shown(topK)} is not a whole number of 1 or more`, 'Give a topK of 1 or more, or leave it out.');
  if (toolChoice !== undefined) {
    if (toolChoice === null || typeof toolChoice !== 'object' || !TOOL_CHOICES.includes(toolChoice.type)) {
      refused(model, 'toolChoice', toolChoice, 'invalid', `toolChoice ${shown(toolChoice)} is not a tool choice`, "Give { type: 'auto' | 'any' | 'none' } or { type: 'tool', name } (--tool-choice auto|any|none|tool:NAME).");
    }
    if (toolChoice.type === 'tool' && !(typeof toolChoice.name === 'string' && TOOL_NAME.test(toolChoice.name))) {
      refused(model, 'toolChoice', toolChoice, 'invalid', `toolChoice names the tool ${shown(toolChoice.name)}, which is not a tool name`, 'Name one of the run\'s tools: --tool-choice tool:NAME.');
    }
  }
  if (stopSequences !== undefined && !(Array.isArray(stopSequences) && stopSequences.every((text) => typeof text === 'string' && text.trim() !== ''))) {
    refused(model, 'stopSequences', stopSequences, 'invalid', 'stopSequences must be texts with something other than white space in each', 'Give a list of non-empty texts (--stop-sequences TEXT,TEXT), or leave it out.');
  }
  if (serviceTier !== undefined && !SERVICE_TIERS.includes(serviceTier)) refused(model, 'serviceTier', serviceTier, 'invalid', `serviceTier ${shown(serviceTier)} is not a service tier`, 'Give auto or standard_only.');
  if (effort !== undefined && !EFFORTS.includes(effort)) refused(model, 'effort', effort, 'invalid', `effort ${shown(effort)} is not an effort`, `Give one of ${EFFORTS.join(', ')}.`);
  if (metadata?.userId !== undefined && typeof metadata.userId !== 'string') refused(model, 'metadata', metadata, 'invalid', 'metadata.userId must be a text (an opaque id)', 'Give a text, or leave it out.');
  const serverTools = serverToolsProblem(options.serverTools);
  if (serverTools) refused(model, serverTools.field, serverTools.value, serverTools.rule, serverTools.problem, serverTools.advice);
  if (!thinkingOn(options)) return;
  const advice = 'Leave it out, or turn thinking off.';
  if (temperature !== undefined && temperature !== 1) refused(model, 'temperature', temperature, 'thinking-temperature', `temperature ${temperature} does not go with thinking (only 1 does)`, `${advice} (--temperature 1 is allowed.)`);
  if (topK !== undefined) refused(model, 'topK', topK, 'thinking-top-k', 'topK does not go with thinking', advice);
  if (topP !== undefined && topP < 0.95) refused(model, 'topP', topP, 'thinking-top-p', `topP ${topP} does not go with thinking (0.95 to 1 does)`, `${advice} (A topP of 0.95 or more is allowed.)`);
  if (toolChoice?.type === 'any' || toolChoice?.type === 'tool') {
    refused(model, 'toolChoice', toolChoice, 'thinking-tool-choice', `toolChoice ${toolChoice.type} (a forced tool call) does not go with thinking`, 'Use --tool-choice auto or none with thinking, or turn thinking off.');
  }
}

/**
 * The API version the requests ask for: apiVersion, else an anthropic-version among the headers,
 * else the SDK's. Both given and different: refused (which one was meant cannot be told).
 */
export function apiVersionOf(model: string, options: { apiVersion?: string | undefined; headers?: Record<string, string> | undefined }): string {
  const header = Object.entries(options.headers ?? {}).find(([name]) => name.toLowerCase() === 'anthropic-version')?.[1];
  if (options.apiVersion !== undefined && typeof options.apiVersion !== 'string') {
    refused(model, 'apiVersion', options.apiVersion, 'invalid', `apiVersion ${shown(options.apiVersion)} is not an API version`, `Give one as the API names it, e.g. '${SAMPLING_API_VERSION}'.`);
  }
  if (options.apiVersion !== undefined && header !== undefined && header !== options.apiVersion) {
    refused(model, 'apiVersion', options.apiVersion, 'invalid', `apiVersion ${options.apiVersion} and the anthropic-version header ${header} disagree`, 'Give the version once, as apiVersion.');
  }
  return options.apiVersion ?? header ?? SDK_API_VERSION;
}

/** What a request adds to the checks of the options: its max_tokens and its tools (the run's own: the server tools join them here). */
export function checkRequestAgainst(model: string, options: ClaudeRequestOptions & { headers?: Record<string, string> | undefined }, maxTokens: number, ownToolNames: readonly string[]): void {
  checkRequestOptions(model, options, maxTokens);
  const serverNames = serverToolNames(normalServerTools(options.serverTools));
  const taken = ownToolNames.find((name) => serverNames.includes(name));
  if (taken !== undefined) {
    throw new RequestOptionError(model, 'serverTools', options.serverTools, 'server-tool-name-taken', `the run has a tool of its own named ${taken}, the name of a server tool it offers too (the API takes each name once)`, `Rename the run's tool, or leave that server tool out.`);
  }
  const toolNames = [...ownToolNames, ...serverNames];
  const choice = options.toolChoice;
  if (choice?.type !== 'any' && choice?.type !== 'tool') return;
  if (toolNames.length === 0) {
    throw new RequestOptionError(model, 'toolChoice', choice, 'tool-choice-without-tools', `toolChoice ${choice.type} asks for a tool call, and the run offers no tool`, 'Offer a tool, or use --tool-choice auto.');
  }
  if (choice.type === 'tool' && !toolNames.includes(choice.name)) {
    throw new RequestOptionError(model, 'toolChoice', choice, 'tool-choice-unknown-tool', `toolChoice names ${choice.name}, which the run does not offer (it offers ${toolNames.join(', ')})`, 'Name one of those: --tool-choice tool:NAME.');
  }
}

/** The body fields the options add to a request; a summary (client compaction) asks without thinking, tool calls or stop sequences. */
/** The body fields of a request; the sampling ones are the older API version's, which the SDK 1.x types no longer name. */
export type RequestFields = Partial<Anthropic.Messages.MessageCreateParamsNonStreaming> & { temperature?: number; top_p?: number; top_k?: number };

export function requestFieldsOf(options: ClaudeRequestOptions, request: { purpose?: 'reply' | 'summary' | undefined; hasTools: boolean }): RequestFields {
  const summary = request.purpose === 'summary';
  const fields: RequestFields = {};
  // A summary is text: the older turns' tools stay defined (their blocks are in the request) but none is called,
  // and a user's stop sequence, meant for the agent's replies, must not cut it short.
  if (summary) {
    if (request.hasTools) fields.tool_choice = { type: 'none' };
  } else {
    if (options.thinking !== undefined) fields.thinking = options.thinking;
    if (options.toolChoice !== undefined && request.hasTools) fields.tool_choice = options.toolChoice;
    if (options.stopSequences !== undefined) fields.stop_sequences = options.stopSequences;
  }
  if (options.effort !== undefined) fields.output_config = { effort: options.effort };
  if (options.temperature !== undefined) fields.temperature = options.temperature;
  if (options.topP !== undefined) fields.top_p = options.topP;
  if (options.topK !== undefined) fields.top_k = options.topK;
  if (options.metadata?.userId !== undefined) fields.metadata = { user_id: options.metadata.userId };
  if (options.serviceTier !== undefined) fields.service_tier = options.serviceTier;
  return fields;
}

function refused(model: string, option: string, value: unknown, rule: RequestRule, problem: string, advice: string): never {
  throw new RequestOptionError(model, option, value, rule, problem, advice);
}

function inRange(value: unknown, min: number, max: number): boolean {
  return typeof value === 'number' && value >= min && value <= max;
}

function shown(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : value === undefined ? 'undefined' : (JSON.stringify(value) ?? String(value));
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}
