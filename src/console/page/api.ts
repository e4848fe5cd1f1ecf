/**
 * The console's API as the page calls it: every request carries the token in a header (never in
 * the address); an answer that is not a success becomes an Error with the API's own words.
 */
import type { Decision } from '../../../machines/agent-loop.types.ts';
import type { SentSignal } from '../../awaits/send-signal.ts';
import type { controlFor, ForkMade } from '../run-actions.ts';
import type { RunDetail } from '../run-detail.ts';
import type { RunList } from '../run-sources.ts';

/** A page of the list, with what the console adds: where it starts, whether more match, who asks, and the tenants. */
export interface RunListPage extends RunList {
  offset: number;
  /** The next page's cursor (pass it as ?after=); null when no more rows match. */
  next: string | null;
  /** The caller's name: who the journal records as deciding. */
  by: string;
  role: 'read' | 'steer';
  /** The only tenant the caller sees; null: every tenant. */
  tenant: string | null;
  /** The tenants the caller may filter by. */
  tenants: string[];
}

/** The body of a decision: the verdict and what goes with it. */
export interface DecisionBody {
  verdict: 'approved' | 'denied' | 'answered';
  reason?: string;
  text?: string;
  input?: unknown;
}

export type ControlKind = 'cancel' | 'pause' | 'unpause';
export type ControlDone = Awaited<ReturnType<typeof controlFor>>;

interface RequestOptions {
  method?: 'GET' | 'POST';
  body?: unknown;
}

export class ConsoleApi {
  constructor(private readonly token: string) {}

  runs(query: string): Promise<RunListPage> {
    return this.request(`/api/runs${query}`);
  }

  /** The machine's diagram, as SVG markup (the console's own drawing, never a run's data). */
  machineSvg(): Promise<string> {
    return this.request('/api/machine.svg');
  }

  run(key: string): Promise<RunDetail> {
    return this.request(runPath(key));
  }

  decide(key: string, toolUseId: string, body: DecisionBody): Promise<{ decision: Decision }> {
    return this.request(`${runPath(key)}/decisions`, { method: 'POST', body: { ...body, toolUseId } });
  }

  signal(key: string, body: { name: string; data: unknown; toolUseId: string }): Promise<SentSignal> {
    return this.request(`${runPath(key)}/signals`, { method: 'POST', body });
  }

  control(key: string, kind: ControlKind, body: { reason?: string }): Promise<ControlDone> {
    return this.request(`${runPath(key)}/${kind}`, { method: 'POST', body });
  }

  fork(key: string, at: number): Promise<ForkMade> {
    return this.request(`${runPath(key)}/fork`, { method: 'POST', body: { at } });
  }

  /**
   * The run's live records after `lastSeq`, as a response to read. EventSource cannot send a
   * header: the stream is read with fetch, which sends the token and the Last-Event-ID.
   */
  events(key: string, lastSeq: number, signal: AbortSignal): Promise<Response> {
    return fetch(`${runPath(key)}/events`, { headers: { authorization: `Bearer ${this.token}`, 'last-event-id': String(lastSeq) }, signal });
  }

  private async request<T>(path: string, options: RequestOptions = {}): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}` };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(path, { method: options.method ?? 'GET', headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    if (!response.ok) throw new Error(errorOf(body) || `HTTP ${response.status}`);
    return body as T;
  }
}

function runPath(key: string): string {
  return `/api/runs/${encodeURIComponent(key)}`;
}

/** The API's words for what went wrong, when the answer has them. */
function errorOf(body: unknown): string {
  if (body && typeof body === 'object' && 'error' in body) return String((body as { error: unknown }).error || '');
  return '';
}
