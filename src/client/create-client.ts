/** createClient: every call of the HTTP API, typed by its wire format (api-types.ts). */
import type {
  AnswerBody,
  ApiRun,
  ApiRunCategory,
  DecisionBody,
  GetRunAnswer,
  ListRunsAnswer,
  RunEvent,
  SignalBody,
  StartRunAnswer,
  StartRunBody,
  SteerAnswer,
} from './api-types.ts';
import { type ClientOptions, clientConfig } from './client-options.ts';
import { type FollowOptions, followRunEvents } from './follow-run.ts';
import { newIdempotencyKey } from './idempotency-key.ts';
import { requestJson } from './request.ts';

export interface StartRunOptions {
  /**
   * Sent as the Idempotency-Key header: a retry with the same key finds the run the first request
   * started (the answer says `created: false`). Default: a fresh key per call, so that the client's
   * own retries never start a run twice.
   */
  idempotencyKey?: string | undefined;
  signal?: AbortSignal | undefined;
}

export interface ListRunsFilter {
  /** Only runs of this category. */
  state?: ApiRunCategory | undefined;
  /** Only runs of this tenant (a token of every tenant only). */
  tenant?: string | undefined;
  /** The `next` of the page before. */
  cursor?: string | undefined;
  /** At most this many runs on the page (the server caps it). */
  limit?: number | undefined;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
}

export interface DurableAgentClient {
  /** POST /v1/runs: starts a run of an agent the server knows. */
  startRun(body: StartRunBody, options?: StartRunOptions): Promise<StartRunAnswer>;
  /** GET /v1/runs/:id */
  getRun(runId: string, options?: CallOptions): Promise<ApiRun>;
  /** GET /v1/runs: one page, newest first; `next` is the cursor of the following page, null at the end. */
  listRuns(filter?: ListRunsFilter, options?: CallOptions): Promise<ListRunsAnswer>;
  /** Every run the filter matches, page after page (from `filter.cursor` when given). */
  listAllRuns(filter?: ListRunsFilter, options?: CallOptions): AsyncIterableIterator<ApiRun>;
  /** The run's events as they are recorded, until its `end`: reconnects, never yields a recorded event twice. */
  followRun(runId: string, options?: FollowOptions): AsyncGenerator<RunEvent, void, undefined>;
  /** Approves or denies a tool call that waits for a decision. */
  decide(runId: string, body: DecisionBody, options?: CallOptions): Promise<SteerAnswer>;
  /** Answers a question the run asked (a call that waits for an answer). */
  answer(runId: string, body: AnswerBody, options?: CallOptions): Promise<SteerAnswer>;
  /** Sends a named signal (an event a durable wait may be waiting for). */
  signal(runId: string, body: SignalBody, options?: CallOptions): Promise<SteerAnswer>;
  cancel(runId: string, options?: CallOptions): Promise<SteerAnswer>;
  pause(runId: string, options?: CallOptions): Promise<SteerAnswer>;
  unpause(runId: string, options?: CallOptions): Promise<SteerAnswer>;
}

export function createClient(options: ClientOptions): DurableAgentClient {
  const config = clientConfig(options);
  const runPath = (runId: string) => `/v1/runs/${encodeURIComponent(runId)}`;
  // A steering request goes to the run's inbox: sent once, since a second might be acted on twice.
  const steer = (runId: string, what: string, body: unknown, call?: CallOptions) =>
    requestJson<SteerAnswer>(config, { method: 'POST', path: `${runPath(runId)}/${what}`, body, repeatable: false, signal: call?.signal });

  const listRuns = (filter: ListRunsFilter = {}, call?: CallOptions) =>
    requestJson<ListRunsAnswer>(config, { method: 'GET', path: `/v1/runs${queryOf(filter)}`, repeatable: true, signal: call?.signal });

  return {
    startRun: (body, start = {}) =>
      requestJson<StartRunAnswer>(config, {
        method: 'POST',
        path: '/v1/runs',
        body,
        headers: { 'idempotency-key': start.idempotencyKey ?? newIdempotencyKey() },
        repeatable: true,
        signal: start.signal,
      }),
    getRun: async (runId, call) => (await requestJson<GetRunAnswer>(config, { method: 'GET', path: runPath(runId), repeatable: true, signal: call?.signal })).run,
    listRuns,
    listAllRuns: async function* (filter = {}, call) {
      let cursor = filter.cursor;
      do {
        const page = await listRuns({ ...filter, cursor }, call);
        yield* page.runs;
        cursor = page.next ?? undefined;
      } while (cursor !== undefined);
    },
    followRun: (runId, follow) => followRunEvents(config, runId, follow),
    decide: (runId, body, call) => steer(runId, 'decisions', body, call),
    answer: (runId, body, call) => steer(runId, 'answers', body, call),
    signal: (runId, body, call) => steer(runId, 'signals', body, call),
    // An empty object as the body: a server that declares a JSON body for these reads one.
    cancel: (runId, call) => steer(runId, 'cancel', {}, call),
    pause: (runId, call) => steer(runId, 'pause', {}, call),
    unpause: (runId, call) => steer(runId, 'unpause', {}, call),
  };
}

function queryOf(filter: ListRunsFilter): string {
  const params = new URLSearchParams();
  if (filter.state !== undefined) params.set('state', filter.state);
  if (filter.tenant !== undefined) params.set('tenant', filter.tenant);
  if (filter.cursor !== undefined) params.set('cursor', filter.cursor);
  if (filter.limit !== undefined) params.set('limit', String(filter.limit));
  const query = params.toString();
  return query ? `?${query}` : '';
}
