/**
 * Webhooks: a signed POST for each time a fleet run comes to rest (done, failed, cancelled,
 * waiting for a person, stopped at a limit). The event rows are written by a trigger of schema 8
 * in the transaction that moved the run (an outbox: none lost, none for a change that rolled
 * back); workers deliver them beside their runs. Delivery is at least once: a receiver
 * deduplicates on the event's id, the same on every attempt. Nothing here can stop, fail or hold
 * up a run: a run's progress never waits for a delivery, and a delivery's failure is a log line
 * and a retry. Events are not sent in order (retries, sends side by side): `at` orders them.
 *
 * Events belong to an endpoint. A worker registers its URL's (da_webhook_endpoints, a hash of
 * the URL without its credentials) before it takes a run, a run coming to rest writes one event
 * for each endpoint registered then, and a worker sends only the events of its own: an event
 * made for one URL is never sent to another, and a worker started with another URL leaves them
 * and says so. What was made for an URL no worker sends to any more waits in da_events.
 *
 * The signature, and how a receiver checks it: webhook-signature.ts.
 */
import { createHash } from 'node:crypto';
import { ChannelSignal } from '../store/pg/channel-signal.ts';
import type { Database } from '../store/pg/pool.ts';
import { claimDueEvents, markEventsDelivered, recordFailedAttempt, registerEndpoint, releaseEventNow, undeliveredElsewhere } from '../store/pg/webhook-events.ts';
import { addSecrets, redactSecrets } from '../util/redact.ts';
import { type FleetRunResult, readFleetRun, REST_CHANNEL } from './await-run.ts';
import type { KeysGiven } from '../seal/keys.ts';
import { KeyNotGivenError } from '../seal/seal-errors.ts';
import { RunKeyMissingError } from '../store/errors.ts';
import { MIN_SECRET_LENGTH, WebhookSettingsError } from './webhook-errors.ts';
import { type RestResult, webhookBodyOf } from './webhook-body.ts';
import { signWebhookRequest, WEBHOOK_EVENT_ID_HEADER, WEBHOOK_EVENT_TYPE_HEADER, WEBHOOK_SIGNATURE_HEADER, type WebhookEventBody, type WebhookEventType, type WebhookSettings } from './webhook-signature.ts';

export { WebhookSettingsError } from './webhook-errors.ts';
export * from './webhook-signature.ts';

const DEFAULT_TIMEOUT_MS = 10_000;
/** A claimed event is another worker's to send once this has passed: longer than an attempt may take. */
const CLAIM_LEASE_MS = 30_000;
/**
 * After this many failed attempts an event is left undelivered with next_attempt_at 'infinity':
 * a dead letter, visible in da_events with its last_error, sent again only once an operator
 * sets next_attempt_at back (and attempts to 0). With the backoff below that is about two hours
 * of a receiver refusing or unreachable.
 */
const MAX_ATTEMPTS = 20;
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 600_000;
/** How often to look for events that came due (retries) besides being woken by a run coming to rest. */
const POLL_INTERVAL_MS = 1_000;
/** Events claimed and sent side by side at a time. */
const BATCH = 8;
/** How long a stopping worker waits for the sends under way before it leaves them to the next worker. */
const STOP_GRACE_MS = 5_000;
/**
 * How long a worker leaves the event of a run another worker brought to rest before it looks:
 * that worker knows the run's answer and sends it without reading the run back (a journal's fold,
 * the bulk of an event's cost); this one sends it if that one has not by then.
 */
const OTHERS_EVENT_DELAY_MS = 250;

/** What a worker knows of a run it brought to rest itself: the answer an event of that rest carries. */
export interface RestedRun {
  state: string;
  text: string | null;
  failure: string | null;
  /** The run is sealed: its body carries no answer unless the settings ask for content (webhook-body.ts). */
  sealed: boolean;
}

/** The settings as a delivery uses them: the URL without its credentials, which go in a header. */
interface Target {
  url: string;
  /** What the events made for this URL name: a hash of the URL as sent (credentials out), so that a path that holds a token is not stored. */
  endpoint: string;
  /** Where requests go, for log lines: scheme, host and port, nothing a path or query may hold. */
  origin: string;
  authorization: string | null;
  secret: string;
  timeoutMs: number;
  /** A sealed run's answer goes in its body too (WebhookSettings.includeContent). */
  includeContent: boolean;
  /** Secrets of the process from now on: taken out of whatever it prints, stores or exports. */
  secrets: string[];
  /** What this delivery's own messages never show: the secrets, the URL's user name, its path and query. */
  unshown: string[];
}

/** Checks the settings (WebhookSettingsError); the problem never quotes the secret or the URL, which may hold credentials. */
function checkWebhookSettings(settings: WebhookSettings): Target {
  const { secret } = settings;
  const timeoutMs = settings.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (typeof secret !== 'string' || secret.trim().length < MIN_SECRET_LENGTH) throw new WebhookSettingsError(`the secret is shorter than ${MIN_SECRET_LENGTH} characters`);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 100 || timeoutMs > 600_000) throw new WebhookSettingsError(`timeoutMs is a whole number of milliseconds from 100 to 600000 (got ${timeoutMs})`);
  let url: URL;
  try {
    url = new URL(settings.url);
  } catch {
    throw new WebhookSettingsError('the URL is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WebhookSettingsError(`the URL is not http or https (it is ${url.protocol.replace(/:$/, '')})`);
  const user = decoded(url.username);
  const password = decoded(url.password);
  // fetch refuses a URL with credentials: they are sent the way a browser would send them.
  const authorization = user || password ? `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` : null;
  url.username = '';
  url.password = '';
  const secrets = [secret, password, authorization?.slice('Basic '.length) ?? ''];
  // A path or query may be a credential too (many services put a token there): only the origin is ever shown.
  const pathAndQuery = `${url.pathname}${url.search}`;
  const endpoint = createHash('sha256').update(url.href).digest('hex');
  return { url: url.href, endpoint, origin: url.origin, authorization, secret, timeoutMs, includeContent: settings.includeContent === true, secrets, unshown: [...secrets, user, pathAndQuery.length >= 12 ? pathAndQuery : ''] };
}

interface ClaimedEvent {
  id: string;
  eventId: string;
  runId: string;
  type: WebhookEventType;
  state: string;
  at: Date;
  attempts: number;
  agent: string | null;
  agentVersion: string | null;
}

type Outcome = { delivered: true } | { delivered: false; why: string } | { interrupted: true };

/** Sends the events of every run of the fleet to one URL, from beside a worker's runs (see the top of this file). */
export class WebhookDelivery {
  private readonly target: Target;
  private readonly claimLeaseMs: number;
  private readonly signal: ChannelSignal;
  /** Cuts short the attempts under way: a stop that has waited for them long enough calls each. */
  private readonly inFlight = new Set<() => void>();
  /** Set by such a stop: nothing more is sent. */
  private interrupted = false;
  private running: Promise<void> | null = null;
  private registered: Promise<void> | null = null;
  private stopping = false;
  private woken = false;
  private wake: (() => void) | null = null;
  /** A failing database is said once until it answers again, not at every poll. */
  private claimFailing = false;

  constructor(
    private readonly pool: Database,
    settings: WebhookSettings,
    private readonly log: (line: string) => void,
    /** The runs this process brought to rest, by id: their events are sent at once and without reading the run back. */
    private readonly restedHere: (runId: string) => RestedRun | undefined = () => undefined,
    /** The worker's master keys: a sealed run's answer read back is opened with them (else it goes sealed). */
    private readonly keys?: KeysGiven,
  ) {
    this.target = checkWebhookSettings(settings);
    // Whatever this process prints, stores or exports from now on has the secret taken out.
    addSecrets(this.target.secrets);
    this.claimLeaseMs = Math.max(CLAIM_LEASE_MS, this.target.timeoutMs + 20_000);
    // The trigger of schema 7 NOTIFYs da_rest in the transaction that wrote the event row: the row is there when the notification is.
    this.signal = new ChannelSignal(pool, REST_CHANNEL, (runId) => this.restNoticed(runId), (line) => this.log(line), { what: 'runs coming to rest', signalOnListen: false });
  }

  /** A run came to rest (the payload is its id): at once when this process moved it, a little later when another did. */
  private restNoticed(runId: string | undefined): void {
    if (runId === undefined || this.restedHere(runId) !== undefined) return this.wakeUp();
    setTimeout(() => this.wakeUp(), OTHERS_EVENT_DELAY_MS).unref();
  }

  /**
   * Makes this URL an endpoint that runs coming to rest write events for, and says what events
   * of other endpoints wait undelivered (left to workers of those). A worker calls it before it
   * takes a run, so that every run it brings to rest has an event for it; start() calls it too.
   */
  register(): Promise<void> {
    this.registered ??= (async () => {
      const { endpoint, origin } = this.target;
      await registerEndpoint(this.pool, endpoint, origin);
      const others = await undeliveredElsewhere(this.pool, endpoint);
      const unowned = others.filter((row) => row.unowned).reduce((sum, row) => sum + row.count, 0);
      const owned = others.filter((row) => !row.unowned);
      if (owned.length > 0) {
        const total = owned.reduce((sum, row) => sum + row.count, 0);
        const where = owned.map((row) => `${row.origin ?? 'an endpoint no longer registered'}: ${row.count}`).join(', ');
        this.log(`leaves ${total} undelivered ${plural(total, 'event')} of ${owned.length === 1 ? 'another endpoint' : 'other endpoints'} (${where}) to the workers sending there; sends only the events made for ${origin}`);
      }
      if (unowned > 0) {
        this.log(
          `leaves ${unowned} undelivered ${plural(unowned, 'event')} made before events named their endpoint (schema 12): sent to no endpoint, since the URL ${unowned === 1 ? 'it was' : 'they were'} made for was not recorded; to send ${unowned === 1 ? 'it' : 'them'} to ${origin}, set ${unowned === 1 ? 'its' : 'their'} endpoint in da_events to that of ${origin} in da_webhook_endpoints`,
        );
      }
    })();
    return this.registered;
  }

  start(): void {
    if (this.running) return;
    this.log(`delivering the events of runs at rest to ${this.target.origin} (the events made for this URL), signed (header ${WEBHOOK_SIGNATURE_HEADER})`);
    this.running = Promise.resolve().then(() => this.register()).then(() => this.loop()).catch((error: unknown) => this.log(`[ALERT] stopped delivering by an error (${this.words(messageOf(error))}); the events wait in da_events for another worker`));
  }

  /** Claims no more; waits for the sends under way (and a last look for what is due) up to a bound, then leaves the rest to another worker. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wakeUp();
    if (this.running) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), STOP_GRACE_MS)));
      if ((await Promise.race([this.running, late])) === 'late') {
        this.interrupted = true;
        for (const interrupt of this.inFlight) interrupt();
      }
      clearTimeout(timer);
      await this.running;
    }
    await this.signal.stop();
  }

  private wakeUp(): void {
    this.woken = true;
    this.wake?.();
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      await this.signal.ensure();
      this.woken = false;
      // A full batch: more may be due at once.
      if ((await this.pass()) === BATCH) continue;
      await this.nap();
    }
    // What came to rest just before the stop (a worker that exits when idle) goes out now, not with the next worker.
    if (!this.interrupted) await this.pass();
  }

  private nap(): Promise<void> {
    if (this.woken || this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, POLL_INTERVAL_MS);
      this.wake = done;
    });
  }

  /** Claims the events due and sends them, side by side; how many it claimed. */
  private async pass(): Promise<number> {
    let events: ClaimedEvent[];
    try {
      events = await this.claim();
      if (this.claimFailing) this.log('reading the events to deliver again');
      this.claimFailing = false;
    } catch (error) {
      if (!this.claimFailing) this.log(`cannot read the events to deliver right now (${this.words(messageOf(error))}); retrying every ${POLL_INTERVAL_MS} ms`);
      this.claimFailing = true;
      return 0;
    }
    const delivered = (await Promise.all(events.map((event) => this.deliver(event)))).filter((event) => event !== null);
    if (delivered.length > 0) {
      try {
        // One statement for every event of the pass that went out.
        await markEventsDelivered(this.pool, delivered.map((event) => event.id));
        for (const event of delivered) if (event.attempts > 0) this.log(`${this.what(event)}: delivered at attempt ${event.attempts + 1}`);
      } catch (error) {
        for (const event of delivered) this.log(`${this.what(event)}: cannot record its delivery (${this.words(messageOf(error))}); it is sent again once its claim lapses`);
      }
    }
    return events.length;
  }

  private what(event: ClaimedEvent): string {
    return `event ${event.eventId} (${event.type} of run ${event.runId})`;
  }

  /** Two workers never send one event at once; one killed mid-send leaves it to another once the claim lapses. */
  private async claim(): Promise<ClaimedEvent[]> {
    const rows = await claimDueEvents(this.pool, this.target.endpoint, BATCH, this.claimLeaseMs);
    return rows
      .map((row) => ({ id: row.id, eventId: row.event_id, runId: row.run_id, type: row.type as WebhookEventType, state: row.state, at: row.at, attempts: row.attempts, agent: row.agent, agentVersion: row.agent_version }))
      .sort((a, b) => Number(a.id) - Number(b.id));
  }

  /** One attempt; the event when it was delivered (its delivery is recorded with the pass's others), else null. */
  private async deliver(event: ClaimedEvent): Promise<ClaimedEvent | null> {
    let outcome: Outcome;
    try {
      outcome = await this.post(event, JSON.stringify(await this.bodyOf(event)));
    } catch (error) {
      outcome = { delivered: false, why: `cannot read the run's result (${messageOf(error)})` };
    }
    if ('delivered' in outcome && outcome.delivered) return event;
    const what = this.what(event);
    try {
      if ('interrupted' in outcome) {
        await releaseEventNow(this.pool, event.id);
        this.log(`${what}: the worker stopped during its delivery; left for the next worker to send again`);
      } else {
        await this.failed(event, what, this.words(outcome.why));
      }
    } catch (error) {
      this.log(`${what}: cannot record its delivery (${this.words(messageOf(error))}); it is sent again once its claim lapses`);
    }
    return null;
  }

  private async failed(event: ClaimedEvent, what: string, why: string): Promise<void> {
    const attempt = event.attempts + 1;
    const last = attempt >= MAX_ATTEMPTS;
    // Doubling, capped, and spread ±20% so that the retries of many events after an outage do not come in one burst.
    const delayMs = Math.round(Math.min(FIRST_RETRY_MS * 2 ** event.attempts, MAX_RETRY_MS) * (0.8 + 0.4 * Math.random()));
    await recordFailedAttempt(this.pool, event.id, why, last, delayMs);
    this.log(
      last
        ? `[ALERT] ${what}: not delivered (${why}); gave up after ${attempt} attempts, left undelivered in da_events (set its next_attempt_at to now() and attempts to 0 to send it again)`
        : `${what}: not delivered at attempt ${attempt} (${why}); next attempt in ${formatSeconds(delayMs)}`,
    );
  }

  /** The run read back, its answer opened with the keys given; one they do not open (a shredded run) goes as it is stored, sealed. */
  private async readBack(runId: string): Promise<FleetRunResult> {
    try {
      return await readFleetRun(this.pool, runId, this.keys);
    } catch (error) {
      if (!(error instanceof KeyNotGivenError || error instanceof RunKeyMissingError)) throw error;
      return readFleetRun(this.pool, runId);
    }
  }

  private async bodyOf(event: ClaimedEvent): Promise<WebhookEventBody> {
    let result: RestResult | null = null;
    if (event.type === 'run.done' || event.type === 'run.failed') {
      const here = this.restedHere(event.runId);
      const read = here?.state === event.state ? here : await this.readBack(event.runId);
      // A run taken up again since (by a fork's message, a retry) rests elsewhere now: its answer then is not this event's.
      if (read.state === event.state) result = { text: read.text, failure: read.failure, sealed: read.sealed };
    }
    // What a sealed run's body carries, and what it leaves out: webhook-body.ts.
    return webhookBodyOf(event, result, this.target.includeContent);
  }

  /**
   * One attempt, ended by its answer, its time limit or the stop. Both limits are timers held
   * here, and the attempt ends when they fire whatever fetch does: on Node 20 an
   * AbortSignal.timeout joined with another signal by AbortSignal.any can be garbage collected
   * before it fires (seen under GC pressure), and an attempt left to it would hang for as long as
   * the receiver does. The abort is sent all the same, to close the connection.
   */
  private async post(event: ClaimedEvent, body: string): Promise<Outcome> {
    if (this.interrupted) return { interrupted: true };
    const { timeoutMs } = this.target;
    const controller = new AbortController();
    let cut!: (outcome: Outcome) => void;
    const ended = new Promise<Outcome>((resolve) => (cut = resolve));
    const timer = setTimeout(() => {
      cut({ delivered: false, why: `no answer within ${formatSeconds(timeoutMs)}` });
      controller.abort();
    }, timeoutMs);
    const interrupt = () => {
      cut({ interrupted: true });
      controller.abort();
    };
    this.inFlight.add(interrupt);
    try {
      return await Promise.race([this.exchange(event, body, controller.signal), ended]);
    } finally {
      clearTimeout(timer);
      this.inFlight.delete(interrupt);
    }
  }

  private async exchange(event: ClaimedEvent, body: string, signal: AbortSignal): Promise<Outcome> {
    const { url, authorization, secret } = this.target;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      [WEBHOOK_EVENT_ID_HEADER]: event.eventId,
      [WEBHOOK_EVENT_TYPE_HEADER]: event.type,
      [WEBHOOK_SIGNATURE_HEADER]: signWebhookRequest(secret, { id: event.eventId, type: event.type, body }, Math.floor(Date.now() / 1000)),
      ...(authorization ? { authorization } : {}),
    };
    try {
      // A redirect is not followed: the signed body would go wherever the answer points.
      const response = await fetch(url, { method: 'POST', headers, body, signal, redirect: 'manual' });
      if (response.ok) {
        await response.body?.cancel().catch(() => {});
        return { delivered: true };
      }
      const said = await response.text().then(
        (text) => text.replace(/\s+/g, ' ').trim().slice(0, 200),
        () => '',
      );
      const redirect = response.status >= 300 && response.status < 400 ? ' (redirects are not followed: give the URL it redirects to)' : '';
      return { delivered: false, why: `HTTP ${response.status}${redirect}${said ? `: ${said}` : ''}` };
    } catch (error) {
      return { delivered: false, why: networkWords(error) };
    }
  }

  /** Text that may have come from the receiver or the network, without a secret of the settings in it. */
  private words(text: string): string {
    return redactSecrets(text, this.target.unshown);
  }
}

/** fetch says only "fetch failed": the cause says why (ECONNREFUSED 127.0.0.1:8080, a certificate). */
function networkWords(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  const detail = typeof cause?.message === 'string' ? cause.message : typeof cause?.code === 'string' ? cause.code : '';
  return detail ? `${messageOf(error)}: ${detail}` : messageOf(error);
}

/** A URL's user name or password as sent: percent-decoded, or as written where that cannot be. */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function plural(count: number, word: string): string {
  return count === 1 ? word : `${word}s`;
}

function formatSeconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
