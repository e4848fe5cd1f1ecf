/** The model a run calls, and how each request to the Anthropic API is made. */
import type { GivenRequest } from '../../model/pinned-request.ts';
import type { ModelPrice } from '../../model/prices.ts';
import { MIN_THINKING_BUDGET } from '../../model/request-options.ts';
import { UsageError } from '../usage-error.ts';
import { option, type ValuesOf } from './option.ts';
import { shorten } from './read-options.ts';
import { readServerTools, serverToolOptions } from './server-tools.ts';

const HOUR_MS = 3_600_000;
/** The API refuses more than a model can produce with its own message; this only stops nonsense. */
const MAX_TOKENS_LIMIT = 1_000_000;

export const model = (help: string) => option({ key: 'model', type: 'string', value: 'NAME', help, api: 'anthropicModel.model' });
export const maxTokens = option({
  key: 'maxTokens',
  type: 'integer',
  value: 'N',
  help: "the most tokens one model reply may have; the model's own limit applies too",
  min: 1,
  max: MAX_TOKENS_LIMIT,
  defaultText: '4096',
  api: 'RunParts.maxTokens',
});
export const maxRetries = option({
  key: 'maxRetries',
  type: 'integer',
  value: 'N',
  help: 'retries of a failed Anthropic API call (429, 5xx, 529, a timeout…) before the run stops with exit 3',
  min: 0,
  max: 20,
  defaultText: '4',
  api: 'anthropicModel.maxRetries',
});
export const requestTimeout = option({
  key: 'requestTimeoutMs',
  type: 'duration',
  value: 'DURATION',
  help: 'time limit of one request to the Anthropic API (each attempt)',
  min: 1_000,
  max: HOUR_MS,
  defaultText: '10m',
  api: 'anthropicModel.requestTimeoutMs',
  aliases: [{ flag: 'timeout', bareMilliseconds: true }],
});
export const noStream = option({
  key: 'noStream',
  type: 'boolean',
  help: 'ask for each reply whole instead of streaming it (the live view then shows no reply as it arrives)',
  api: 'anthropicModel.stream',
});

/** How a real model is called: what the API client takes besides the model's name and the key. */
export const requestOptions = [maxRetries, requestTimeout] as const;

export interface RequestArgs {
  maxRetries: number | undefined;
  requestTimeoutMs: number | undefined;
}

export function readRequest(values: ValuesOf<typeof requestOptions>): RequestArgs {
  return { maxRetries: values.maxRetries, requestTimeoutMs: values.requestTimeoutMs };
}

/**
 * How Claude is asked, beyond the model and the key: thinking, sampling, tool choice, stop
 * sequences, the service tier, the server tools (server-tools.ts), and the price a cost budget counts by. All pinned with the run
 * when it starts (its journal's header); a resume asks the same way, and one that gives other
 * values is refused unless --allow-request-change.
 */
export const apiVersion = option({
  key: 'apiVersion',
  type: 'string',
  value: 'DATE',
  help: 'the Messages API version to ask for (anthropic-version): 2023-06-01 is the one that still takes --temperature; pinned with the run',
  defaultText: "the SDK's, 2026-10-21",
  api: 'anthropicModel.apiVersion',
});
export const thinking = option({
  key: 'thinking',
  type: 'string',
  value: 'TOKENS',
  help: 'extended thinking with a budget of TOKENS (1024 or more, below --max-tokens), or adaptive (the model decides), or off; its blocks go back to the model unchanged; pinned with the run',
  defaultText: "off (the model's own default)",
  api: 'anthropicModel.thinking',
});
export const temperature = option({
  key: 'temperature',
  type: 'decimal',
  value: 'T',
  help: 'sampling temperature from 0 to 1 (with --thinking only 1); needs --api-version 2023-06-01, the SDK\'s version refuses it; pinned with the run',
  min: 0,
  max: 1,
  api: 'anthropicModel.temperature',
});
export const toolChoice = option({
  key: 'toolChoice',
  type: 'string',
  value: 'CHOICE',
  help: 'auto (the model decides), none, any (a tool in every reply) or tool:NAME (that tool in every reply); any and tool:NAME end a run only at --max-turns and do not go with --thinking; pinned with the run',
  defaultText: 'auto',
  api: 'anthropicModel.toolChoice',
});
export const stopSequences = option({
  key: 'stopSequences',
  type: 'string',
  value: 'TEXTS',
  help: 'texts that end a reply where the model writes one (stop_reason stop_sequence), separated by commas; pinned with the run',
  api: 'anthropicModel.stopSequences',
});
export const serviceTier = option({
  key: 'serviceTier',
  type: 'string',
  value: 'TIER',
  help: 'auto (priority capacity when your organisation has it) or standard_only; pinned with the run',
  api: 'anthropicModel.serviceTier',
});
export const price = option({
  key: 'price',
  type: 'string',
  value: 'PRICES',
  help: "the model's price in US$ per million tokens, all four: input=3,output=15,cache-read=0.3,cache-write=3.75 (so --max-cost-usd works for any model); pinned with the run",
  defaultText: 'the price table, by model name',
  api: 'anthropicModel.price',
});
export const allowRequestChange = option({
  key: 'allowRequestChange',
  type: 'boolean',
  help: 'with --resume: go on although the request options given differ from the ones the run was started with (for this process: the run keeps its own)',
});

export const claudeOptions = [apiVersion, thinking, temperature, toolChoice, stopSequences, serviceTier, ...serverToolOptions, price, allowRequestChange] as const;

export interface ClaudeArgs {
  /** The request options given: a field present was given (thinking null: --thinking off). */
  request: GivenRequest;
  price: ModelPrice | undefined;
  allowRequestChange: boolean;
}

/** Undefined when none of the options was given; --allow-request-change only means something to a resume. */
export function readClaude(values: ValuesOf<typeof claudeOptions>, resume: boolean): ClaudeArgs | undefined {
  if (values.allowRequestChange && !resume) throw new UsageError('--allow-request-change only applies to --resume: it lets a resume go on with other request options. Add --resume, or drop --allow-request-change.');
  const request: GivenRequest = {};
  if (values.apiVersion !== undefined) request.apiVersion = readApiVersion(values.apiVersion);
  if (values.thinking !== undefined) request.thinking = readThinking(values.thinking);
  if (values.temperature !== undefined) request.temperature = values.temperature;
  if (values.toolChoice !== undefined) request.toolChoice = readToolChoice(values.toolChoice);
  if (values.stopSequences !== undefined) request.stopSequences = readStopSequences(values.stopSequences);
  if (values.serviceTier !== undefined) request.serviceTier = readServiceTier(values.serviceTier);
  const serverTools = readServerTools(values);
  if (serverTools !== undefined) request.serverTools = serverTools;
  const given = values.price === undefined ? undefined : readPrice(values.price);
  if (Object.keys(request).length === 0 && given === undefined && !values.allowRequestChange) return undefined;
  return { request, price: given, allowRequestChange: values.allowRequestChange };
}

function readApiVersion(text: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) throw new UsageError(`--api-version takes a version as the API names it, a date (2023-06-01), not "${shorten(text)}".`);
  return text;
}

function readThinking(text: string): NonNullable<GivenRequest['thinking']> | null {
  if (text === 'off') return null;
  if (text === 'adaptive') return { type: 'adaptive' };
  const budget = /^\d{1,9}$/.test(text) ? Number(text) : Number.NaN;
  if (!(budget >= MIN_THINKING_BUDGET)) {
    throw new UsageError(`--thinking takes a budget of thinking tokens (${MIN_THINKING_BUDGET} or more, below --max-tokens), adaptive or off, not "${shorten(text)}".`);
  }
  return { type: 'enabled', budget_tokens: budget };
}

function readToolChoice(text: string): NonNullable<GivenRequest['toolChoice']> {
  if (text === 'auto' || text === 'any' || text === 'none') return { type: text };
  const name = text.startsWith('tool:') ? text.slice('tool:'.length) : null;
  if (name !== null && /^[A-Za-z0-9_-]{1,128}$/.test(name)) return { type: 'tool', name };
  throw new UsageError(`--tool-choice takes auto, any, none or tool:NAME (tool:read_file), not "${shorten(text)}".`);
}

function readStopSequences(text: string): string[] {
  const texts = text.split(',');
  if (texts.some((piece) => piece.trim() === '')) {
    throw new UsageError(`--stop-sequences takes texts separated by commas, none of them empty ("END,###"), not "${shorten(text)}".`);
  }
  return texts;
}

function readServiceTier(text: string): string {
  if (text !== 'auto' && text !== 'standard_only') throw new UsageError(`--service-tier takes auto or standard_only, not "${shorten(text)}".`);
  return text;
}

const PRICE_KEYS: Readonly<Record<string, keyof ModelPrice>> = { input: 'input', output: 'output', 'cache-read': 'cacheRead', 'cache-write': 'cacheWrite' };
const PRICE_SHAPE = 'input=3,output=15,cache-read=0.3,cache-write=3.75 (US$ per million tokens)';

function readPrice(text: string): ModelPrice {
  const price: Partial<ModelPrice> = {};
  for (const pair of text.split(',')) {
    const [key, value, extra] = pair.split('=');
    const field = key === undefined ? undefined : PRICE_KEYS[key.trim()];
    const number = value !== undefined && /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
    if (!field || extra !== undefined || !Number.isFinite(number)) throw new UsageError(`--price takes ${PRICE_SHAPE}, and "${shorten(pair)}" is not one of those.`);
    if (price[field] !== undefined) throw new UsageError(`--price gives ${key!.trim()} twice: give each of the four once, ${PRICE_SHAPE}.`);
    price[field] = number;
  }
  const missing = Object.keys(PRICE_KEYS).filter((key) => price[PRICE_KEYS[key]!] === undefined);
  if (missing.length > 0) throw new UsageError(`--price needs all four prices, and ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing: ${PRICE_SHAPE}.`);
  return price as ModelPrice;
}
