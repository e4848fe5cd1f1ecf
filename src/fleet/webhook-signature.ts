/**
 * The signature of a webhook request, and its check for a receiver (pure crypto: a receiver
 * loads nothing else of the package). Each request carries
 *   durable-agent-event-id: <the event's id, a UUID>
 *   durable-agent-signature: t=<unix seconds>,v1=<hex HMAC-SHA256, keyed with the secret, of "<t>.<body>">
 * where <body> is the request's body, byte for byte as received. A receiver recomputes the HMAC
 * over the raw body (not over JSON it parsed and serialized again), compares in constant time,
 * and refuses a t too far from its clock (a replay): verifyWebhookSignature does all three.
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
  /** run.done: the model's final answer. */
  text?: string;
  /** run.failed: what the run failed of. */
  failure?: string;
}

export const WEBHOOK_EVENT_ID_HEADER = 'durable-agent-event-id';
export const WEBHOOK_SIGNATURE_HEADER = 'durable-agent-signature';

/** The signature header for `body` at `unixSeconds` (see the top of this file). */
export function signWebhookBody(secret: string, body: string | Uint8Array, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${hmacHex(secret, unixSeconds, body)}`;
}

export interface VerifyWebhookOptions {
  /** How far the signature's time may be from now, either way; default 300 s. */
  toleranceSeconds?: number | undefined;
  /** Now, in unix seconds (tests); default the clock. */
  nowSeconds?: number | undefined;
}

/**
 * Whether `header` (durable-agent-signature) signs `body` (the raw body, as received) with
 * `secret`, at a time within the tolerance of now. Constant-time in the signature's bytes.
 */
export function verifyWebhookSignature(secret: string, header: string | null | undefined, body: string | Uint8Array, options: VerifyWebhookOptions = {}): boolean {
  if (typeof header !== 'string' || typeof secret !== 'string' || secret === '') return false;
  let t: number | null = null;
  const given: Buffer[] = [];
  for (const part of header.split(',')) {
    const equals = part.indexOf('=');
    if (equals < 0) continue;
    const [key, value] = [part.slice(0, equals).trim(), part.slice(equals + 1).trim()];
    if (key === 't' && /^\d{1,12}$/.test(value)) t = Number(value);
    else if (key === 'v1' && /^[0-9a-fA-F]{64}$/.test(value)) given.push(Buffer.from(value, 'hex'));
  }
  if (t === null || given.length === 0) return false;
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - t) > (options.toleranceSeconds ?? 300)) return false;
  const expected = Buffer.from(hmacHex(secret, t, body), 'hex');
  return given.some((signature) => timingSafeEqual(signature, expected));
}

function hmacHex(secret: string, unixSeconds: number, body: string | Uint8Array): string {
  return createHmac('sha256', secret).update(`${unixSeconds}.`).update(body).digest('hex');
}

