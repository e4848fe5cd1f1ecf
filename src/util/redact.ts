/**
 * Takes secrets out of text before it leaves the process (a printed line, an error message, a
 * message stored in the journal). Gateways and proxies echo request headers in their error
 * bodies, and the fleet prints database URLs, so any text that came from outside may carry one.
 *
 * What goes: the API key this process was given (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, or one
 * passed in), every secret the process was handed for a part it connects (an MCP server's env,
 * headers and URL credentials, a webhook's secret: addSecrets), anything shaped like an Anthropic
 * key, the value of an Authorization or x-api-key header, a bearer token, and the password of a
 * URL (postgresql://user:PASSWORD@host). What a tool returned or threw loses the secrets known by
 * value, the console's token too, before the ledger or the model sees it (secretsInToolResults).
 */

export const REDACTED = '[redacted]';

/** Shorter values are not redacted verbatim: a test key "x" would otherwise erase every x. */
const MIN_SECRET_LENGTH = 8;

const ENV_SECRETS = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'DURABLE_AGENT_WEBHOOK_SECRET'] as const;

/**
 * The console's token (NAME:SECRET) is kept out of tool results only: the console prints its own
 * address with the token in it, and that line must stay one that opens the console.
 */
const CONSOLE_TOKEN_ENV = 'DURABLE_AGENT_CONSOLE_TOKEN';

/** The secrets of tool results as last read, until the event loop turns or a secret is added. */
let toolResultSecrets: readonly string[] | null = null;

function forgetToolResultSecrets(): void {
  toolResultSecrets = null;
}

/** Secrets this process was handed (addSecrets): redacted from everything it stores, prints or exports. */
const added = new Set<string>();

/** Makes these values secrets of the process from now on (an MCP server's env, headers, URL credentials). */
export function addSecrets(values: Iterable<string | null | undefined>): void {
  for (const value of values) {
    const trimmed = value?.trim();
    if (trimmed && trimmed.length >= MIN_SECRET_LENGTH) added.add(trimmed);
  }
  forgetToolResultSecrets();
}

/**
 * The text with the secrets the process knows by value taken out, and nothing else: for what a
 * tool returned, where a pattern (password=…, a URL's credentials) may be what the task is about.
 */
export function redactKnownSecrets(text: string): string {
  return redactSecretsIn(text, secretsInToolResults());
}

/**
 * The secrets a tool's result must not carry, longest first: empty when the process knows none,
 * and then nothing needs a scan (the common case, on the path of every call).
 */
export function secretsInToolResults(): readonly string[] {
  if (toolResultSecrets) return toolResultSecrets;
  const token = process.env[CONSOLE_TOKEN_ENV];
  const colon = token ? token.indexOf(':') : -1;
  toolResultSecrets = knownSecrets(!token ? [] : colon > 0 ? [token, token.slice(colon + 1)] : [token]);
  // Read again at the next turn of the event loop: a read of the environment costs about a
  // microsecond each, and a run in memory steps many tool calls in one turn of it.
  setImmediate(forgetToolResultSecrets).unref();
  return toolResultSecrets;
}

/**
 * `value` (text, content blocks, any JSON) with each of `secrets` replaced by [redacted] in every
 * string it holds, the same value when none was there (nothing is copied). The base64 bytes of an
 * image or a document are left alone: a key is never in them as text, and a replacement there
 * would break the payload.
 */
export function redactSecretsIn<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  return redactedValue(value, secrets) as T;
}

function redactedValue(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') {
    let out = value;
    for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  }
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item = redactedValue(value[i], secrets);
      if (item !== value[i]) (copy ??= value.slice())[i] = item;
    }
    return copy ?? value;
  }
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  let copy: Record<string, unknown> | null = null;
  for (const key of Object.keys(record)) {
    if (key === 'data' && record.type === 'base64') continue;
    const item = redactedValue(record[key], secrets);
    if (item !== record[key]) (copy ??= { ...record })[key] = item;
  }
  return copy ?? value;
}

const PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  // An Anthropic key wherever it stands (sk-ant-api03-…, sk-ant-admin01-…).
  [/sk-ant-[A-Za-z0-9_-]+/g, `sk-ant-${REDACTED}`],
  // A header as text or as JSON: `Authorization: Bearer X`, `"x-api-key":"X"`, `authorization=Basic X`.
  [
    /((?:authorization|proxy-authorization|x-api-key|api-key)["']?\s*[:=]\s*["']?\s*(?:(?:bearer|basic|token)\s+)?)[^\s"',;}]+/gi,
    `$1${REDACTED}`,
  ],
  // A bearer token elsewhere (8 characters at least: "bearer of" in prose is left alone).
  [/(\b(?:Bearer|bearer|BEARER)\s+)[A-Za-z0-9._~+/=-]{8,}/g, `$1${REDACTED}`],
  // scheme://user:PASSWORD@host; a password with "/" or "@" is percent-encoded in a valid URL.
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)[^\s@/]+@/gi, `$1${REDACTED}@`],
  // libpq key=value strings: password=…
  [/(\bpassword\s*=\s*)[^\s&;]+/gi, `$1${REDACTED}`],
];

/** Every pattern needs one of these; text without any (most lines) skips the patterns. */
const TRIGGER = /sk-ant-|authoriz|api-key|bearer|:\/\/|password/i;

/** The text with every secret it holds replaced by [redacted]; `extra` adds known secret values. */
export function redactSecrets(text: string, extra: readonly (string | null | undefined)[] = []): string {
  let out = text;
  for (const secret of knownSecrets(extra)) {
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  if (!TRIGGER.test(out)) return out;
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

function knownSecrets(extra: readonly (string | null | undefined)[]): string[] {
  const secrets: string[] = [];
  const add = (value: string | null | undefined) => {
    const trimmed = value?.trim();
    if (trimmed && trimmed.length >= MIN_SECRET_LENGTH && !secrets.includes(trimmed)) secrets.push(trimmed);
  };
  for (const name of ENV_SECRETS) add(process.env[name]);
  for (const value of added) add(value);
  for (const value of extra) add(value);
  // Longest first, so a key that contains another is taken out whole.
  return secrets.length > 1 ? secrets.sort((a, b) => b.length - a.length) : secrets;
}
