/**
 * Claude's server tools on the command line: web search, web fetch and code execution, which
 * Anthropic's servers run inside a reply. Each flag is named after its API option with the tool
 * in front (`--web-search-max-uses` for serverTools.webSearch.maxUses): a bare --max-uses would
 * not say which tool it limits. A setting of a tool turns the tool on. Pinned with the run like
 * the other request options: a resume that gives them must give the same.
 */
import type { GivenRequest } from '../../model/pinned-request.ts';
import type { ServerTools, WebSearchOption } from '../../model/server-tools.ts';
import { UsageError } from '../usage-error.ts';
import { option, type ValuesOf } from './option.ts';
import { shorten } from './read-options.ts';

/** The API's own limit is not documented; this only stops nonsense. */
const MAX_USES_LIMIT = 1_000;

export const webSearch = option({
  key: 'webSearch',
  type: 'boolean',
  help: 'let Claude search the web (web_search_20260318, $10 per 1,000 searches, counted in --max-cost-usd); pinned with the run',
  api: 'anthropicModel.serverTools.webSearch',
});
export const webSearchMaxUses = option({
  key: 'webSearchMaxUses',
  type: 'integer',
  value: 'N',
  help: 'at most N web searches in one request (turns --web-search on)',
  min: 1,
  max: MAX_USES_LIMIT,
  api: 'anthropicModel.serverTools.webSearch.maxUses',
});
export const webSearchAllowedDomains = option({
  key: 'webSearchAllowedDomains',
  type: 'string',
  value: 'DOMAINS',
  help: 'only results from these domains, separated by commas (example.com,docs.example.org/api; no https://); not with --web-search-blocked-domains',
  api: 'anthropicModel.serverTools.webSearch.allowedDomains',
});
export const webSearchBlockedDomains = option({
  key: 'webSearchBlockedDomains',
  type: 'string',
  value: 'DOMAINS',
  help: 'never results from these domains, separated by commas',
  api: 'anthropicModel.serverTools.webSearch.blockedDomains',
});
export const webFetch = option({
  key: 'webFetch',
  type: 'boolean',
  help: 'let Claude fetch web pages and PDFs by URL (web_fetch_20260318; no charge beyond the tokens); pinned with the run',
  api: 'anthropicModel.serverTools.webFetch',
});
export const webFetchMaxUses = option({
  key: 'webFetchMaxUses',
  type: 'integer',
  value: 'N',
  help: 'at most N fetches in one request (turns --web-fetch on)',
  min: 1,
  max: MAX_USES_LIMIT,
  api: 'anthropicModel.serverTools.webFetch.maxUses',
});
export const webFetchAllowedDomains = option({
  key: 'webFetchAllowedDomains',
  type: 'string',
  value: 'DOMAINS',
  help: 'fetch only from these domains, separated by commas; not with --web-fetch-blocked-domains',
  api: 'anthropicModel.serverTools.webFetch.allowedDomains',
});
export const webFetchBlockedDomains = option({
  key: 'webFetchBlockedDomains',
  type: 'string',
  value: 'DOMAINS',
  help: 'never fetch from these domains, separated by commas',
  api: 'anthropicModel.serverTools.webFetch.blockedDomains',
});
export const codeExecution = option({
  key: 'codeExecution',
  type: 'boolean',
  help: "let Claude run code in Anthropic's sandbox (code_execution_20260521); its container is kept with the run and reused while it lives; pinned with the run",
  api: 'anthropicModel.serverTools.codeExecution',
});

export const serverToolOptions = [
  webSearch,
  webSearchMaxUses,
  webSearchAllowedDomains,
  webSearchBlockedDomains,
  webFetch,
  webFetchMaxUses,
  webFetchAllowedDomains,
  webFetchBlockedDomains,
  codeExecution,
] as const;

/** The server tools given, as a run pins them; undefined when no flag of theirs was given. */
export function readServerTools(values: ValuesOf<typeof serverToolOptions>): GivenRequest['serverTools'] | undefined {
  const tools: ServerTools = {};
  const search = settingsOf('--web-search', values.webSearch, values.webSearchMaxUses, values.webSearchAllowedDomains, values.webSearchBlockedDomains);
  if (search) tools.webSearch = search;
  const fetch = settingsOf('--web-fetch', values.webFetch, values.webFetchMaxUses, values.webFetchAllowedDomains, values.webFetchBlockedDomains);
  if (fetch) tools.webFetch = fetch;
  if (values.codeExecution) tools.codeExecution = {};
  return Object.keys(tools).length > 0 ? (tools as NonNullable<GivenRequest['serverTools']>) : undefined;
}

function settingsOf(flag: string, on: boolean, maxUses: number | undefined, allowed: string | undefined, blocked: string | undefined): Pick<WebSearchOption, 'maxUses' | 'allowedDomains' | 'blockedDomains'> | null {
  if (!on && maxUses === undefined && allowed === undefined && blocked === undefined) return null;
  if (allowed !== undefined && blocked !== undefined) {
    throw new UsageError(`${flag}-allowed-domains and ${flag}-blocked-domains do not go together (the API takes one of them): give the domains to allow or the ones to block.`);
  }
  return {
    ...(maxUses !== undefined ? { maxUses } : {}),
    ...(allowed !== undefined ? { allowedDomains: readDomains(`${flag}-allowed-domains`, allowed) } : {}),
    ...(blocked !== undefined ? { blockedDomains: readDomains(`${flag}-blocked-domains`, blocked) } : {}),
  };
}

function readDomains(flag: string, text: string): string[] {
  const domains = text.split(',').map((domain) => domain.trim());
  if (domains.some((domain) => domain === '' || /\s/.test(domain) || /^[a-z][a-z0-9+.-]*:\/\//i.test(domain))) {
    throw new UsageError(`${flag} takes domains separated by commas, without a scheme (example.com,docs.example.org/api), not "${shorten(text)}".`);
  }
  return domains;
}
