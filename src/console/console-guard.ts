/**
 * Who may talk to the console, checked before any route:
 * - the Host header must name the console itself (a page of another site that a DNS trick
 *   points at 127.0.0.1 sends its own host name, and is refused);
 * - every /api request carries a token as `Authorization: Bearer TOKEN` (the page keeps it in
 *   sessionStorage, taken from the fragment of the address the console printed: a fragment is
 *   never sent to a server, and the page drops it from the address at once), which a TokenCheck
 *   turns into its caller: the console's own token, or one of a tokens file, scoped to a tenant;
 * - a request that changes something needs a caller that steers: a read token only reads;
 * - a request that changes something (anything but GET and HEAD) must also come from the
 *   console's own origin (Origin, and Sec-Fetch-Site where the browser sends it) and carry JSON,
 *   which a form of another site cannot send.
 * What fails is answered 403 and nothing else happens.
 */
import { type Caller, maySteer, type TokenCheck } from '../access/caller.ts';

export interface GuardVerdict {
  ok: boolean;
  /** Why it was refused, in words for the response. */
  why?: string;
  /** Who asks: an /api request's caller, as its token says. */
  caller?: Caller;
}

export interface GuardRequest {
  method: string;
  path: string;
  host: string | undefined;
  origin: string | undefined;
  secFetchSite: string | undefined;
  authorization: string | undefined;
  contentType: string | undefined;
}

export class ConsoleGuard {
  constructor(
    private readonly tokens: TokenCheck,
    /** The host:port names the console answers to (known once it listens); null: any (it listens on every address). */
    private readonly hosts: () => ReadonlySet<string> | null,
  ) {}

  check(request: GuardRequest): GuardVerdict {
    const host = request.host?.toLowerCase();
    const names = this.hosts();
    if (!host || (names !== null && !names.has(host))) return { ok: false, why: 'the Host header does not name this console' };
    const changes = request.method !== 'GET' && request.method !== 'HEAD';
    if (changes) {
      if (request.origin !== `http://${host}`) return { ok: false, why: 'a request that changes something must come from the console\'s own page (Origin)' };
      if (request.secFetchSite !== undefined && request.secFetchSite !== 'same-origin') return { ok: false, why: 'a request that changes something must come from the console\'s own page (Sec-Fetch-Site)' };
    }
    if (request.path.startsWith('/api/')) {
      const caller = this.tokens.callerOf(request.authorization);
      if (caller === null) return { ok: false, why: 'the console\'s token is missing or wrong: open the address the console printed' };
      if (changes && !request.contentType?.toLowerCase().startsWith('application/json')) return { ok: false, why: 'a request that changes something sends JSON' };
      if (changes && !maySteer(caller)) return { ok: false, why: `the token ${caller.name} only reads: a token that steers is needed` };
      return { ok: true, caller };
    }
    return { ok: true };
  }
}

/**
 * The host:port names a console listening on `host`:`port` answers to; null for every address
 * (0.0.0.0, ::), reached by whatever name the machine has: the token guards it then.
 */
export function hostNamesOf(host: string, port: number): Set<string> | null {
  if (host === '0.0.0.0' || host === '::' || host === '[::]') return null;
  const names = new Set([`${host}:${port}`.toLowerCase()]);
  if (isLoopback(host)) for (const name of ['127.0.0.1', 'localhost', '[::1]']) names.add(`${name}:${port}`);
  return names;
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
