/**
 * The signature of a webhook request, and its check for a receiver (pure crypto: a receiver
 * loads nothing else of the package). Each request carries
 *   durable-agent-event-id: <the event's id, a UUID>
 *   durable-agent-event-type: <the event's type, run.done …>
 *   durable-agent-signature: t=<unix seconds>,v2=<hex HMAC-SHA256, keyed with the secret, of "v2\n<t>\n<id>\n<type>\n<body>">
 * where <body> is the request's body, byte for byte as received. The id and the type are signed
 * with the body because a receiver deduplicates on the id: were it not signed, a request captured
 * and sent again within the tolerance under a new id would pass as a new event. Lines end each
 * part, and an id or a type never holds one, so no part can be moved into its neighbour.
 *
 * A receiver recomputes the HMAC over the raw body (not over JSON it parsed and serialized
 * again) and the id and type it was given, compares in constant time, and refuses a t too far
 * from its clock (a replay): verifyWebhookSignature does all of it and returns the id and type it
 * verified. The scheme's version names the signature (v2=): a later scheme is sent beside it,
 * and a receiver reads the versions it knows. v1 (the body alone) is no longer sent or accepted.
 * Every attempt is signed anew, so a retry hours later still passes the tolerance.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type WebhookEventType = 'run.done' | 'run.failed' | 'run.cancelled' | 'run.waiting' | 'run.max_turns_reached' | 'run.budget_reached';

/** Where a worker sends its events, and what signs them. */
export interface WebhookSettings {
  /** http or https. Credentials in it (https://user:pass@host/) are sent as basic authorization, never logged. */
  url: string;
  /** The HMAC key of the signature: 16 characters at least. It is never stored, logged or sent. */
  secret: string;
  /** How long one attempt may take before it counts as failed and is retried; default 10 s. */
  timeoutMs?: number | undefined;
  /**
   * A sealed run's body carries metadata only (its answer is the run's content); true adds its
   * answer when the worker holds it opened. Runs that are not sealed carry their answer either way.
   */
  includeContent?: boolean | undefined;
}

/** The JSON body of a webhook request. */
export interface WebhookEventBody {
  /** The event's id: the same on every attempt; what a receiver deduplicates on. */
  id: string;
  type: WebhookEventType;
  /** The run's id. */
  run: string;
  /** The state the run came to rest in (done, failed, cancelled, awaitingDecision, stoppedAtMaxTurns, stoppedAtBudget). */
  state: string;
  /** When the run came to rest (ISO 8601). */
  at: string;
  /** The agent of the run, for a run of an agent (not for a demo run), and the version it started with. */
  agent?: string;
  agentVersion?: string;
  /** The run is sealed: its answer is not in the body unless the worker was asked to include content. */
  sealed?: true;
  /** run.done: the model's final answer (a sealed run's only with includeContent). */
  text?: string;
  /** run.failed: what the run failed of. */
  failure?: string;
}

export const WEBHOOK_EVENT_ID_HEADER = 'durable-agent-event-id';
export const WEBHOOK_EVENT_TYPE_HEADER = 'durable-agent-event-type';
export const WEBHOOK_SIGNATURE_HEADER = 'durable-agent-signature';

/** What one request signs: the event's id and type (its headers) and the body as sent. */
export interface WebhookRequestParts {
  id: string;
  type: string;
  body: string | Uint8Array;
}

/** The signature header for `request` at `unixSeconds` (see the top of this file). */
export function signWebhookRequest(secret: string, request: WebhookRequestParts, unixSeconds: number): string {
  if (!isPart(request.id) || !isPart(request.type)) throw new TypeError('A webhook event id and type are one line of text each');
  return `t=${unixSeconds},v2=${hmacHex(secret, unixSeconds, request)}`;
}

export interface VerifyWebhookOptions {
  /** How far the signature's time may be from now, either way; default 300 s. */
  toleranceSeconds?: number | undefined;
  /** Now, in unix seconds (tests); default the clock. */
  nowSeconds?: number | undefined;
}

/** A request's headers: Node's (req.headers) or fetch's (request.headers). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

/** What a verified request says, every part of it signed. */
export interface VerifiedWebhook {
  /** The event's id (durable-agent-event-id): what to deduplicate on. */
  id: string;
  /** The event's type (durable-agent-event-type). */
  type: string;
  /** When it was signed, in unix seconds. */
  timestamp: number;
}

/**
 * Checks a request: its signature (durable-agent-signature) signs, with `secret`, its event id and
 * type (durable-agent-event-id, durable-agent-event-type) and `body` (the raw body, as received),
 * at a time within the tolerance of now. Returns the verified id and type, or null: not verified
 * (a header missing, another secret, a changed body, id or type, a time out of the tolerance).
 * Constant-time in the signature's bytes.
 */
export function verifyWebhookSignature(secret: string, headers: WebhookHeaders, body: string | Uint8Array, options: VerifyWebhookOptions = {}): VerifiedWebhook | null {
  if (typeof secret !== 'string' || secret === '' || typeof headers !== 'object' || headers === null) return null;
  const header = headerOf(headers, WEBHOOK_SIGNATURE_HEADER);
  const id = headerOf(headers, WEBHOOK_EVENT_ID_HEADER);
  const type = headerOf(headers, WEBHOOK_EVENT_TYPE_HEADER);
  if (header === null || id === null || type === null || !isPart(id) || !isPart(type)) return null;
  let t: number | null = null;
  const given: Buffer[] = [];
  for (const part of header.split(',')) {
    const equals = part.indexOf('=');
    if (equals < 0) continue;
    const [key, value] = [part.slice(0, equals).trim(), part.slice(equals + 1).trim()];
    if (key === 't' && /^\d{1,12}$/.test(value)) t = Number(value);
    else if (key === 'v2' && /^[0-9a-fA-F]{64}$/.test(value)) given.push(Buffer.from(value, 'hex'));
  }
  if (t === null || given.length === 0) return null;
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - t) > (options.toleranceSeconds ?? 300)) return null;
  const expected = Buffer.from(hmacHex(secret, t, { id, type, body }), 'hex');
  return given.some((signature) => timingSafeEqual(signature, expected)) ? { id, type, timestamp: t } : null;
}

/** One header's value, named in any case; null when absent or given more than once. */
function headerOf(headers: WebhookHeaders, name: string): string | null {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name);
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return typeof value === 'string' ? value : null;
}

/** An id or a type: one line, not empty, so that it cannot run into the next part of what is signed. */
function isPart(text: string): boolean {
  return typeof text === 'string' && text !== '' && !/[\r\n]/.test(text);
}

function hmacHex(secret: string, unixSeconds: number, request: WebhookRequestParts): string {
  return createHmac('sha256', secret).update(`v2\n${unixSeconds}\n${request.id}\n${request.type}\n`).update(request.body).digest('hex');
}
