/**
 * Claude's server tools: web search, web fetch and code execution, which Anthropic's servers run
 * inside one reply (their server_tool_use and *_tool_result blocks arrive in the assistant's
 * content, and go back as they came). A run offers them beside its own tools; which ones, and
 * how, is a request option pinned with the run. What the Messages API would refuse of them is
 * said here, before anything is sent, in the option's words.
 *
 * The tool versions are those of the bundled @anthropic-ai/sdk (1.14), newest first; the newest
 * is the default. None of them needs a beta header but code_execution_20250522, the first one.
 * Which models take which version is the Models API's to say (capabilities.server_tools): a model
 * that does not take one answers 400, and the run stops at once with its store intact (a 400 is
 * not retried): give another version, or resume without the tool (--allow-request-change).
 */
import type Anthropic from '@anthropic-ai/sdk';

export const WEB_SEARCH_TYPES = ['web_search_20260318', 'web_search_20260209', 'web_search_20250305'] as const;
export const WEB_FETCH_TYPES = ['web_fetch_20260318', 'web_fetch_20260309', 'web_fetch_20260209', 'web_fetch_20250910'] as const;
export const CODE_EXECUTION_TYPES = ['code_execution_20260521', 'code_execution_20260120', 'code_execution_20250825', 'code_execution_20250522'] as const;

export type WebSearchType = (typeof WEB_SEARCH_TYPES)[number];
export type WebFetchType = (typeof WEB_FETCH_TYPES)[number];
export type CodeExecutionType = (typeof CODE_EXECUTION_TYPES)[number];

/** The beta header a tool version still needs (the SDK lists no other for these tools). */
const BETA_OF_TYPE: Readonly<Record<string, string>> = { code_execution_20250522: 'code-execution-2025-05-22' };

/** Where the user is, roughly: search results near them (web_search's user_location). */
export interface UserLocationOption {
  type: 'approximate';
  city?: string | undefined;
  region?: string | undefined;
  /** Two capital letters, ISO 3166-1 alpha-2 (`DE`). */
  country?: string | undefined;
  /** An IANA time zone (`Europe/Berlin`). */
  timezone?: string | undefined;
}

export interface WebSearchOption {
  /** The tool version; default the newest, web_search_20260318. */
  type?: WebSearchType | undefined;
  /** The most searches in one request (max_uses): a whole number of 1 or more. */
  maxUses?: number | undefined;
  /** Only these domains in the results (`example.com`, `example.com/blog`; no scheme). Not with blockedDomains. */
  allowedDomains?: string[] | undefined;
  /** Never these domains. Not with allowedDomains. */
  blockedDomains?: string[] | undefined;
  userLocation?: UserLocationOption | undefined;
}

export interface WebFetchOption {
  /** The tool version; default the newest, web_fetch_20260318. */
  type?: WebFetchType | undefined;
  maxUses?: number | undefined;
  allowedDomains?: string[] | undefined;
  blockedDomains?: string[] | undefined;
  /** About how many tokens of a page's text go into the context (max_content_tokens). */
  maxContentTokens?: number | undefined;
  /** Citations of the fetched documents (off by default). */
  citations?: boolean | undefined;
}

export interface CodeExecutionOption {
  /** The tool version; default the newest, code_execution_20260521. */
  type?: CodeExecutionType | undefined;
}

/** The server tools a run offers: a tool given (true, or its settings) is offered; absent or false, not. */
export interface ServerToolsOption {
  webSearch?: WebSearchOption | boolean | undefined;
  webFetch?: WebFetchOption | boolean | undefined;
  codeExecution?: CodeExecutionOption | boolean | undefined;
}

/** The same, as a run pins it: each offered tool's settings (an object, `{}` for none), the others left out. */
export interface ServerTools {
  webSearch?: WebSearchOption;
  webFetch?: WebFetchOption;
  codeExecution?: CodeExecutionOption;
}

export type ServerToolKey = keyof ServerTools;
export const SERVER_TOOL_KEYS: readonly ServerToolKey[] = ['webSearch', 'webFetch', 'codeExecution'];

/** The names each server tool's blocks go by (code execution's later versions run bash and a text editor under their own). */
const NAMES_OF: Readonly<Record<ServerToolKey, readonly string[]>> = {
  webSearch: ['web_search'],
  webFetch: ['web_fetch'],
  codeExecution: ['code_execution', 'bash_code_execution', 'text_editor_code_execution'],
};

/** The option's tools as pinned (objects, copied), or undefined when it offers none. */
export function normalServerTools(given: ServerToolsOption | null | undefined): ServerTools | undefined {
  if (!given) return undefined;
  const tools: Record<string, object> = {};
  for (const key of SERVER_TOOL_KEYS) {
    const value = given[key];
    if (value === undefined || value === false) continue;
    tools[key] = value === true ? {} : withoutUndefined(structuredClone(value) as Record<string, unknown>);
  }
  return Object.keys(tools).length > 0 ? (tools as ServerTools) : undefined;
}

/** The tool names the server tools take in a request (a tool of the run's own may not have one). */
export function serverToolNames(tools: ServerTools | undefined): string[] {
  return SERVER_TOOL_KEYS.filter((key) => tools?.[key]).flatMap((key) => NAMES_OF[key]);
}

/** What a refused server tool option breaks; request-options.ts words it as a RequestOptionError. */
export interface ServerToolProblem {
  rule: 'invalid' | 'server-tool-unknown-type' | 'server-tool-domains-both';
  /** `serverTools.webSearch.maxUses`, say. */
  field: string;
  value: unknown;
  problem: string;
  advice: string;
}

const FLAG_OF: Readonly<Record<ServerToolKey, string>> = { webSearch: '--web-search', webFetch: '--web-fetch', codeExecution: '--code-execution' };
const KNOWN_FIELDS: Readonly<Record<ServerToolKey, readonly string[]>> = {
  webSearch: ['type', 'maxUses', 'allowedDomains', 'blockedDomains', 'userLocation'],
  webFetch: ['type', 'maxUses', 'allowedDomains', 'blockedDomains', 'maxContentTokens', 'citations'],
  codeExecution: ['type'],
};
const TYPES_OF: Readonly<Record<ServerToolKey, readonly string[]>> = { webSearch: WEB_SEARCH_TYPES, webFetch: WEB_FETCH_TYPES, codeExecution: CODE_EXECUTION_TYPES };

/** The first thing the Messages API would refuse of the server tools, or null. */
export function serverToolsProblem(given: unknown): ServerToolProblem | null {
  if (given === undefined || given === null) return null;
  const at = 'serverTools';
  if (typeof given !== 'object' || Array.isArray(given)) return invalid(at, given, 'serverTools is not an object', "Give { webSearch, webFetch, codeExecution }, each true or its settings (--web-search, --web-fetch, --code-execution).");
  for (const key of Object.keys(given)) {
    if (!SERVER_TOOL_KEYS.includes(key as ServerToolKey)) return invalid(`${at}.${key}`, undefined, `serverTools has no tool ${key}`, `The server tools are ${SERVER_TOOL_KEYS.join(', ')}.`);
  }
  for (const key of SERVER_TOOL_KEYS) {
    const value = (given as Record<string, unknown>)[key];
    if (value === undefined || typeof value === 'boolean') continue;
    const problem = toolProblem(key, value);
    if (problem) return problem;
  }
  return null;
}

function toolProblem(key: ServerToolKey, settings: unknown): ServerToolProblem | null {
  const at = `serverTools.${key}`;
  if (settings === null || typeof settings !== 'object' || Array.isArray(settings)) return invalid(at, settings, `${at} is neither true nor its settings`, `Give true, or an object of ${KNOWN_FIELDS[key].join(', ')}.`);
  const fields = settings as Record<string, unknown>;
  const unknown = Object.keys(fields).find((field) => !KNOWN_FIELDS[key].includes(field));
  if (unknown) return invalid(`${at}.${unknown}`, fields[unknown], `${at} has no setting ${unknown}`, `Its settings are ${KNOWN_FIELDS[key].join(', ')}.`);
  const { type } = fields;
  if (type !== undefined && !TYPES_OF[key].includes(type as string)) {
    return {
      rule: 'server-tool-unknown-type',
      field: `${at}.type`,
      value: type,
      problem: `${shown(type)} is not a version of the ${NAMES_OF[key][0]} tool this SDK knows`,
      advice: `Give one of ${TYPES_OF[key].join(', ')}, or leave type out for the newest.`,
    };
  }
  for (const field of ['maxUses', 'maxContentTokens'] as const) {
    const value = fields[field];
    if (value !== undefined && !(Number.isSafeInteger(value) && (value as number) >= 1)) {
      return invalid(`${at}.${field}`, value, `${at}.${field} ${shown(value)} is not a whole number of 1 or more`, `Give 1 or more${field === 'maxUses' ? ` (${FLAG_OF[key]}-max-uses N)` : ''}, or leave it out.`);
    }
  }
  for (const field of ['allowedDomains', 'blockedDomains'] as const) {
    const problem = domainsProblem(`${at}.${field}`, fields[field], `${FLAG_OF[key]}-${field === 'allowedDomains' ? 'allowed' : 'blocked'}-domains`);
    if (problem) return problem;
  }
  if (isNonEmptyList(fields.allowedDomains) && isNonEmptyList(fields.blockedDomains)) {
    return {
      rule: 'server-tool-domains-both',
      field: `${at}.allowedDomains`,
      value: { allowedDomains: fields.allowedDomains, blockedDomains: fields.blockedDomains },
      problem: `${at} gives both allowedDomains and blockedDomains, which the API takes one at a time`,
      advice: `Give one of them: the domains to allow (${FLAG_OF[key]}-allowed-domains) or the ones to block (${FLAG_OF[key]}-blocked-domains).`,
    };
  }
  if (fields.citations !== undefined && typeof fields.citations !== 'boolean') return invalid(`${at}.citations`, fields.citations, `${at}.citations is not true or false`, 'Give true (citations of the fetched documents) or false.');
  if (fields.userLocation !== undefined) return userLocationProblem(`${at}.userLocation`, fields.userLocation);
  return null;
}

function domainsProblem(at: string, value: unknown, flag: string): ServerToolProblem | null {
  if (value === undefined) return null;
  const advice = `Give domains as the API takes them, without a scheme: example.com or example.com/blog (${flag} example.com,docs.example.org).`;
  if (!Array.isArray(value) || value.length === 0) return invalid(at, value, `${at} is not a list of one or more domains`, advice);
  const wrong = value.find((domain) => typeof domain !== 'string' || domain.trim() === '' || /\s/.test(domain) || /^[a-z][a-z0-9+.-]*:\/\//i.test(domain));
  if (wrong !== undefined) return invalid(at, value, `${at} holds ${shown(wrong)}, which is not a domain (a scheme, a space or nothing)`, advice);
  return null;
}

const LOCATION_FIELDS = ['type', 'city', 'region', 'country', 'timezone'];

function userLocationProblem(at: string, value: unknown): ServerToolProblem | null {
  const advice = "Give { type: 'approximate', city?, region?, country? (two letters, DE), timezone? (IANA, Europe/Berlin) }.";
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return invalid(at, value, `${at} is not a location`, advice);
  const fields = value as Record<string, unknown>;
  if (fields.type !== 'approximate') return invalid(`${at}.type`, fields.type, `${at}.type must be approximate (the only kind the API takes)`, advice);
  const unknown = Object.keys(fields).find((field) => !LOCATION_FIELDS.includes(field));
  if (unknown) return invalid(`${at}.${unknown}`, fields[unknown], `${at} has no field ${unknown}`, advice);
  for (const field of ['city', 'region'] as const) {
    const text = fields[field];
    if (text !== undefined && !(typeof text === 'string' && text.trim() !== '' && text.length <= 255)) return invalid(`${at}.${field}`, text, `${at}.${field} is not a name of 1 to 255 characters`, advice);
  }
  if (fields.country !== undefined && !(typeof fields.country === 'string' && /^[A-Z]{2}$/.test(fields.country))) {
    return invalid(`${at}.country`, fields.country, `${at}.country ${shown(fields.country)} is not a two-letter country code`, advice);
  }
  if (fields.timezone !== undefined && !isTimeZone(fields.timezone)) return invalid(`${at}.timezone`, fields.timezone, `${at}.timezone ${shown(fields.timezone)} is not an IANA time zone`, advice);
  return null;
}

function isTimeZone(value: unknown): boolean {
  if (typeof value !== 'string' || value === '') return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

/** The tools' entries in the request's `tools`, in the API's words. */
export function serverToolDefinitions(tools: ServerTools | undefined): Anthropic.Messages.ToolUnion[] {
  if (!tools) return [];
  const definitions: Anthropic.Messages.ToolUnion[] = [];
  const search = tools.webSearch;
  if (search) {
    definitions.push({
      type: search.type ?? WEB_SEARCH_TYPES[0],
      name: 'web_search',
      ...(search.maxUses !== undefined ? { max_uses: search.maxUses } : {}),
      ...(search.allowedDomains ? { allowed_domains: search.allowedDomains } : {}),
      ...(search.blockedDomains ? { blocked_domains: search.blockedDomains } : {}),
      ...(search.userLocation ? { user_location: search.userLocation } : {}),
    } as Anthropic.Messages.ToolUnion);
  }
  const fetch = tools.webFetch;
  if (fetch) {
    definitions.push({
      type: fetch.type ?? WEB_FETCH_TYPES[0],
      name: 'web_fetch',
      ...(fetch.maxUses !== undefined ? { max_uses: fetch.maxUses } : {}),
      ...(fetch.allowedDomains ? { allowed_domains: fetch.allowedDomains } : {}),
      ...(fetch.blockedDomains ? { blocked_domains: fetch.blockedDomains } : {}),
      ...(fetch.maxContentTokens !== undefined ? { max_content_tokens: fetch.maxContentTokens } : {}),
      ...(fetch.citations !== undefined ? { citations: { enabled: fetch.citations } } : {}),
    } as Anthropic.Messages.ToolUnion);
  }
  const code = tools.codeExecution;
  if (code) definitions.push({ type: code.type ?? CODE_EXECUTION_TYPES[0], name: 'code_execution' } as Anthropic.Messages.ToolUnion);
  return definitions;
}

/** The beta headers the tools' versions need (none for the current ones). */
export function serverToolBetas(tools: ServerTools | undefined): string[] {
  return serverToolDefinitions(tools).flatMap((tool) => {
    const beta = BETA_OF_TYPE[(tool as { type?: string }).type ?? ''];
    return beta ? [beta] : [];
  });
}

/** The tools in the command line's words, to ask the same way again: `--web-search --web-search-max-uses 5 --code-execution`. */
export function serverToolWords(tools: ServerTools | undefined): string[] {
  const words: string[] = [];
  for (const key of SERVER_TOOL_KEYS) {
    const settings = tools?.[key] as (WebSearchOption & WebFetchOption) | undefined;
    if (!settings) continue;
    const flag = FLAG_OF[key];
    words.push(flag);
    if (settings.maxUses !== undefined) words.push(`${flag}-max-uses`, String(settings.maxUses));
    if (settings.allowedDomains) words.push(`${flag}-allowed-domains`, settings.allowedDomains.join(','));
    if (settings.blockedDomains) words.push(`${flag}-blocked-domains`, settings.blockedDomains.join(','));
  }
  return words;
}

/** Settings of a tool the command line has no flag for (a version, a location…): a resume must be given them by the program. */
export function serverToolsBeyondFlags(tools: ServerTools | undefined): string[] {
  const flagged = new Set(['maxUses', 'allowedDomains', 'blockedDomains']);
  return SERVER_TOOL_KEYS.flatMap((key) => Object.keys(tools?.[key] ?? {}).filter((field) => !flagged.has(field)).map((field) => `serverTools.${key}.${field}`));
}

function invalid(field: string, value: unknown, problem: string, advice: string): ServerToolProblem {
  return { rule: 'invalid', field, value, problem, advice };
}

function isNonEmptyList(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0;
}

function withoutUndefined<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, inner]) => inner !== undefined)) as T;
}

function shown(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : value === undefined ? 'undefined' : (JSON.stringify(value) ?? String(value));
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}
