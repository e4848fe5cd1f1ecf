/**
 * Who is asking, as a bearer token says: the console and the HTTP API both answer a request only
 * after its token names a caller, and then only with what the caller may see and do. A token may
 * read, or read and steer (decide, answer, signal, cancel, pause, start); a token scoped to a
 * tenant sees only that tenant's runs, and another tenant's run is "not found" to it, so that ids
 * cannot be probed.
 */
export type CallerRole = 'read' | 'steer';

export interface Caller {
  /** The token's name: who the journal records as deciding or asking. */
  name: string;
  role: CallerRole;
  /** The only tenant whose runs the caller sees; null: every tenant's. */
  tenant: string | null;
}

/** Turns a request's Authorization header into its caller, or null when the token is missing or unknown. */
export interface TokenCheck {
  callerOf(authorization: string | undefined): Caller | null;
}

/** Whether the caller may see a run of this tenant. */
export function maySee(caller: Caller, tenant: string): boolean {
  return caller.tenant === null || caller.tenant === tenant;
}

/** Whether the caller may change something (a decision, a signal, a start, a cancel). */
export function maySteer(caller: Caller): boolean {
  return caller.role === 'steer';
}
