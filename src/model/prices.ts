/**
 * List prices of the Claude models this code knows, in US dollars per million tokens: the cost
 * a budget (--max-cost-usd) is checked against, and the cost the live view and status show.
 * Source: Anthropic's pricing page (platform.claude.com/docs/en/about-claude/pricing) and each
 * model's page, as of 2026-12-02 (Sonnet 5.5's cache hits at $0.10 since 2026-10-07); update the
 * table when prices change. An estimate only: cache writes are priced at the 5-minute rate;
 * long-context, batch and data-residency rates are ignored. Models not listed get no price
 * rather than a guess, and a run with one refuses a cost budget: Claude Haiku 5.5 among them,
 * whose rate depends on each request's prompt length (a total cannot tell which applied, and
 * the lower rate would let a budget overspend), and Fable 5.2 and Mythos 5.2, whose prices this
 * table has not checked. The scripted model has no price on purpose: its token figures are made
 * up (the tests give a price to a model of their own when needed).
 */
import type { TokenUsage } from '../../machines/agent-loop.types.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

export interface ModelPrice {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

const FABLE_5_1: ModelPrice = { input: 10, output: 50, cacheRead: 0.25, cacheWrite: 12.5 };
const FABLE_5: ModelPrice = { input: 10, output: 50, cacheRead: 1, cacheWrite: 12.5 };
const OPUS_5_5: ModelPrice = { input: 4, output: 20, cacheRead: 0.2, cacheWrite: 5 };
const OPUS_4_5: ModelPrice = { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 };
const OPUS_4: ModelPrice = { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 };
const SONNET_5_5: ModelPrice = { input: 2, output: 10, cacheRead: 0.1, cacheWrite: 2.5 };
const SONNET_5: ModelPrice = { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 };
const SONNET: ModelPrice = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
const HAIKU_4_5: ModelPrice = { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 };
const HAIKU_3_5: ModelPrice = { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 };

const PRICES: Readonly<Record<string, ModelPrice>> = {
  'claude-fable-5-1': FABLE_5_1,
  'claude-mythos-5-1': FABLE_5_1,
  'claude-fable-5': FABLE_5,
  'claude-mythos-5': FABLE_5,
  'claude-opus-5-5': OPUS_5_5,
  'claude-opus-5': OPUS_4_5,
  'claude-opus-4-8': OPUS_4_5,
  'claude-opus-4-7': OPUS_4_5,
  'claude-opus-4-6': OPUS_4_5,
  'claude-opus-4-5': OPUS_4_5,
  'claude-opus-4-1': OPUS_4,
  'claude-opus-4-0': OPUS_4,
  'claude-opus-4': OPUS_4,
  'claude-sonnet-5-5': SONNET_5_5,
  'claude-sonnet-5': SONNET_5,
  'claude-sonnet-4-6': SONNET,
  'claude-sonnet-4-5': SONNET,
  'claude-sonnet-4-0': SONNET,
  'claude-sonnet-4': SONNET,
  'claude-3-7-sonnet': SONNET,
  'claude-haiku-4-5': HAIKU_4_5,
  'claude-3-5-haiku': HAIKU_3_5,
};

/** The price of a model by its API name; a dated snapshot (…-20250929) or …-latest is priced as its family. */
export function priceOf(model: string): ModelPrice | null {
  // The last name asked again (a run asks with its model's name at every reply): the table never changes, nor its answer.
  if (model === lastAsked.model) return lastAsked.price;
  const family = model.replace(/-(\d{8}|latest)$/, '');
  const price = PRICES[family] ?? null;
  lastAsked = { model, price };
  return price;
}

let lastAsked: { model: string | undefined; price: ModelPrice | null } = { model: undefined, price: null };

/** Estimated US dollars for the usage so far, or null when the model's price is not known. */
export function estimateCost(model: string, usage: TokenUsage): number | null {
  const price = priceOf(model);
  return price ? costAt(price, usage) : null;
}

/**
 * The server tools' own prices, the same for every model (their results are input tokens besides,
 * priced as the model's). Source: Anthropic's pricing page, "Tool use pricing"
 * (platform.claude.com/docs/en/about-claude/pricing), as of 2026-12-02:
 * - web search: $10 per 1,000 searches (usage.server_tool_use.web_search_requests), a search
 *   that errs not charged (the API does not count it);
 * - web fetch: no charge beyond the tokens of what it fetched;
 * - code execution: $0.05 per container-hour after 1,550 free hours a month per organisation
 *   (5 minutes at least per use), and free in a request that also offers web search or web
 *   fetch 20260209 or later. Not counted here: no reply says how long its container ran, and a
 *   run cannot see how much of its organisation's free hours is left. A cost budget
 *   (--max-cost-usd) is therefore the tokens and the searches; container time is billed apart.
 */
export const SERVER_TOOL_PRICES = { webSearchPerRequest: 10 / 1_000, webFetchPerRequest: 0 } as const;

/** US dollars for these tokens at this price, and for the server tool requests among them. */
export function costAt(price: ModelPrice, usage: TokenUsage): number {
  const perToken = (perMillion: number) => perMillion / 1_000_000;
  return (
    usage.input * perToken(price.input) +
    usage.output * perToken(price.output) +
    usage.cacheRead * perToken(price.cacheRead) +
    usage.cacheWrite * perToken(price.cacheWrite) +
    (usage.webSearchRequests ?? 0) * SERVER_TOOL_PRICES.webSearchPerRequest +
    (usage.webFetchRequests ?? 0) * SERVER_TOOL_PRICES.webFetchPerRequest
  );
}

const PRICE_FIELDS = ['input', 'output', 'cacheRead', 'cacheWrite'] as const;
/** Above any list price by far: a typo (per token instead of per million, or Infinity) is refused. */
const MAX_PRICE = 100_000;

/** A price given for a model (anthropicModel's `price`, --price) that is not one; nothing was started. */
export class ModelPriceError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'ModelPriceError';
  constructor(
    readonly model: string,
    readonly price: unknown,
    /** The fields missing or not a number of dollars (`cacheRead`…). */
    readonly fields: string[],
  ) {
    super(
      `The price given for ${model} is not one: ${fields.join(', ')} must each be US dollars per million tokens, from 0 to ${MAX_PRICE}. ` +
        'Give all four (input, output, cacheRead, cacheWrite; on the command line --price input=3,output=15,cache-read=0.3,cache-write=3.75). Nothing was started.',
    );
  }
}

/** Throws ModelPriceError unless every field is a price. */
export function checkModelPrice(model: string, price: unknown): asserts price is ModelPrice {
  const fields = price !== null && typeof price === 'object' ? (price as Record<string, unknown>) : {};
  const wrong = PRICE_FIELDS.filter((field) => {
    const value = fields[field];
    return !(typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= MAX_PRICE);
  });
  if (wrong.length > 0) throw new ModelPriceError(model, price, wrong);
}
