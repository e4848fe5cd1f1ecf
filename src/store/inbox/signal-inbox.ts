/**
 * The inbox of signals: named events sent to a run from other processes (`durable-agent signal`),
 * for its wait calls. What "the same signal twice" means, one rule for every store:
 * - a signal with an id (the sender's, for idempotent delivery) is taken once, ever: sending it
 *   again, before or after a wait took it, delivers nothing;
 * - a signal without one is one for the next wait of its name: while one of that name waits to
 *   be taken, another is not delivered (sent twice, taken once); once a wait took it, the next
 *   one sent is for the next wait.
 * A signal sent before any call waits for it is kept until one does. A wait takes the oldest
 * signal of its name by binding it to its call, atomically (a rename, an UPDATE): a wait that is
 * resumed after the binding finds its signal there (takenBy) and never takes a second one; the
 * run's writer then makes it the wait's DECISION record, as it does a person's decision.
 */

export interface Signal {
  /** The event's name (a wait for `{ event: name }` takes it). */
  name: string;
  /** The sender's id, for idempotent delivery; null when none was given. */
  id: string | null;
  /** What the signal carries (any JSON value); null when nothing. */
  data: unknown;
  /** Who sent it: a user name with host from the CLI, what a program passes otherwise. */
  by: string;
  /** Epoch milliseconds when it was sent. */
  at: number;
}

/** What a send did: delivered, or not, because the same signal waits to be taken, or was taken (by that call). */
export type SignalDelivery = { outcome: 'delivered' } | { outcome: 'waiting' } | { outcome: 'taken'; tool_use_id: string };

/** What a wait call waits for, as a claim must know it (a fleet takes the run up when it comes). */
export interface ExpectedWake {
  tool_use_id: string;
  event: string | null;
  /** Epoch ms when the wait ends without its event; null: never. */
  wakeAt: number | null;
}

export interface SignalInbox {
  send(signal: Signal): Promise<SignalDelivery>;
  /** The signal this call took, if it took one: a resume after the take finds it here. */
  takenBy(tool_use_id: string): Promise<Signal | null>;
  /** Binds the oldest untaken signal of `name` sent before `before` (epoch ms) to the call, atomically; null: none. */
  take(name: string, tool_use_id: string, before: number): Promise<Signal | null>;
  /** The signals no wait took yet, oldest first. */
  waiting(): Promise<Signal[]>;
  /** Says what the call waits for, where a claim reads it (PostgreSQL); stores nobody claims from need none. */
  expect?(wake: ExpectedWake): Promise<void>;
}

const WORD = /^[A-Za-z0-9_-]{1,128}$/;

/** Why a stored signal is not a whole one, or null. */
export function signalProblem(value: unknown): string | null {
  const signal = value as Partial<Signal> | null;
  if (signal === null || typeof signal !== 'object') return 'it holds no signal';
  if (typeof signal.name !== 'string' || !WORD.test(signal.name)) return `its name is ${JSON.stringify(signal.name) ?? 'undefined'}`;
  if (signal.id !== null && (typeof signal.id !== 'string' || !WORD.test(signal.id))) return `its id is ${JSON.stringify(signal.id) ?? 'undefined'}`;
  if (!('data' in signal)) return 'it has no data (null for none)';
  if (typeof signal.by !== 'string' || typeof signal.at !== 'number' || !Number.isFinite(signal.at)) return 'it does not say who sent it and when';
  return null;
}
