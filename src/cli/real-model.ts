/** The real model a command asks for: the key from the environment only, the SDK loaded on demand. */
import { MissingApiKeyError, type Model } from '../model/model.ts';
import type { ModelPrice } from '../model/prices.ts';
import type { ClaudeRequestOptions } from '../model/request-options.ts';
import type { RequestArgs } from './args.ts';

/**
 * `alternative`: what the user can do without a key, said when it is missing (MissingApiKeyError).
 * `claude`: how it is asked and priced (model-setup.ts: the given or the pinned options).
 */
export async function realModel(
  name: string,
  env: NodeJS.ProcessEnv,
  request: RequestArgs,
  alternative?: string,
  stream = true,
  claude: ClaudeRequestOptions & { price?: ModelPrice | undefined } = {},
): Promise<Model> {
  const apiKey = env.ANTHROPIC_API_KEY;
  if (!apiKey) throw new MissingApiKeyError(name, alternative);
  // Loaded only when asked for: the SDK takes longer to load than a whole scripted demo takes to run.
  const { anthropicModel } = await import('../model/anthropic-model.ts');
  return anthropicModel({
    model: name,
    apiKey,
    ...(env.ANTHROPIC_BASE_URL ? { baseURL: env.ANTHROPIC_BASE_URL } : {}),
    ...request,
    ...claude,
    stream,
  });
}
