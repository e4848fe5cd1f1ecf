/**
 * What a webhook event's body carries. Always what finds and operates a run: the event's id and
 * type, the run, the state it came to rest in, when, its agent. For a run that is not sealed, its
 * answer (run.done: text) and what it failed of (run.failed: failure) too.
 *
 * A sealed run's body is metadata only, and says so (`sealed: true`): its answer is the run's
 * content, which its owner chose to keep under a key, and a receiver is one more place it would
 * be kept in plain. A worker asked to (WebhookSettings.includeContent) adds the answer of a sealed
 * run when it holds it opened; a sealed string is never sent as if it were the answer. What it
 * failed of is the runtime's own words, readable in a sealed journal too (see
 * src/seal/content-fields.ts), and is sent as for any run.
 */
import { isSealedValue } from '../seal/value-codec.ts';
import type { WebhookEventBody, WebhookEventType } from './webhook-signature.ts';

/** What a body is made of: the event, and the run's result at the state it came to rest in (null when it is at rest elsewhere now). */
export interface EventFacts {
  eventId: string;
  type: WebhookEventType;
  runId: string;
  state: string;
  at: Date;
  agent: string | null;
  agentVersion: string | null;
}

export interface RestResult {
  text: string | null;
  failure: string | null;
  /** The run is sealed (its journal's header says so). */
  sealed: boolean;
}

export function webhookBodyOf(event: EventFacts, result: RestResult | null, includeContent: boolean): WebhookEventBody {
  const body: WebhookEventBody = { id: event.eventId, type: event.type, run: event.runId, state: event.state, at: event.at.toISOString() };
  if (event.agent !== null) body.agent = event.agent;
  if (event.agentVersion !== null) body.agentVersion = event.agentVersion;
  if (result?.sealed) body.sealed = true;
  if (result === null) return body;
  if (event.type === 'run.done' && result.text !== null && (!result.sealed || includeContent) && !isSealedValue(result.text)) body.text = result.text;
  if (event.type === 'run.failed' && result.failure !== null) body.failure = result.failure;
  return body;
}
