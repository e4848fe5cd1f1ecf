/** The model a run calls, and how each request to the Anthropic API is made. */
import { option, type ValuesOf } from './option.ts';

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
