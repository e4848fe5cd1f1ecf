/**
 * da_events, the webhooks' outbox: rows written by a trigger of schema 8 in the transaction that
 * brought a run to rest (since schema 12 one for each endpoint of da_webhook_endpoints), claimed and marked here by the workers that deliver them
 * (src/fleet/webhooks.ts says how and when).
 */
import type { Database } from './pool.ts';

/** An event claimed for delivery, with the agent (and version) of its run. */
export interface EventRow {
  id: string;
  event_id: string;
  run_id: string;
  type: string;
  state: string;
  at: Date;
  attempts: number;
  agent: string | null;
  agent_version: string | null;
}

/**
 * Claims up to `limit` undelivered events of `endpoint` that are due, for `claimMs`: two workers
 * never send one event at once, and one killed mid-send leaves it to another once the claim
 * lapses. Only that endpoint's: an event is sent where it was made for, nowhere else.
 */
export async function claimDueEvents(db: Database, endpoint: string, limit: number, claimMs: number): Promise<EventRow[]> {
  const { rows } = await db.query<EventRow>(
    `UPDATE da_events e SET next_attempt_at = now() + $2 * interval '1 millisecond'
       FROM da_runs r
      WHERE e.id IN (SELECT id FROM da_events WHERE endpoint = $3 AND delivered_at IS NULL AND next_attempt_at <= now() ORDER BY id FOR UPDATE SKIP LOCKED LIMIT $1)
        AND r.id = e.run_id
      RETURNING e.id, e.event_id, e.run_id, e.type, e.state, e.at, e.attempts,
                CASE WHEN r.spec ->> 'kind' = 'agent' THEN r.spec ->> 'agent' END AS agent, r.header #>> '{agent,version}' AS agent_version`,
    [limit, claimMs, endpoint],
  );
  return rows;
}

/**
 * Makes `endpoint` one that runs coming to rest write events for, from this statement's commit
 * on (kept until an operator deletes its row). `origin` is what logs and operators see of it.
 */
export async function registerEndpoint(db: Database, endpoint: string, origin: string): Promise<void> {
  await db.query('INSERT INTO da_webhook_endpoints (endpoint, origin) VALUES ($1, $2) ON CONFLICT (endpoint) DO UPDATE SET origin = EXCLUDED.origin', [endpoint, origin]);
}

/** Undelivered events of other endpoints than `endpoint`, counted by endpoint: origin null for the events made before events named one. */
export async function undeliveredElsewhere(db: Database, endpoint: string): Promise<{ origin: string | null; unowned: boolean; count: number }[]> {
  const { rows } = await db.query<{ origin: string | null; unowned: boolean; count: number }>(
    `SELECT w.origin, e.endpoint IS NULL AS unowned, count(*)::int AS count
       FROM da_events e LEFT JOIN da_webhook_endpoints w ON w.endpoint = e.endpoint
      WHERE e.delivered_at IS NULL AND e.endpoint IS DISTINCT FROM $1
      GROUP BY e.endpoint, w.origin ORDER BY w.origin`,
    [endpoint],
  );
  return rows;
}

/** Marks events delivered, in one statement for all of them. */
export async function markEventsDelivered(db: Database, ids: readonly string[]): Promise<void> {
  await db.query('UPDATE da_events SET delivered_at = now() WHERE id = ANY($1::bigint[]) AND delivered_at IS NULL', [ids]);
}

/** Gives an undelivered event back at once (its sender stopped mid-send): the next worker sends it, with no attempt counted. */
export async function releaseEventNow(db: Database, id: string): Promise<void> {
  await db.query('UPDATE da_events SET next_attempt_at = now() WHERE id = $1 AND delivered_at IS NULL', [id]);
}

/** Counts a failed attempt and says when the next one is due: after `delayMs`, or never (`last`: a dead letter). */
export async function recordFailedAttempt(db: Database, id: string, why: string, last: boolean, delayMs: number): Promise<void> {
  await db.query(
    `UPDATE da_events SET attempts = attempts + 1, last_error = $2,
            next_attempt_at = CASE WHEN $3 THEN 'infinity'::timestamptz ELSE now() + $4 * interval '1 millisecond' END
      WHERE id = $1 AND delivered_at IS NULL`,
    [id, why, last, delayMs],
  );
}
