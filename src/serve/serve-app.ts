/**
 * The HTTP API's app (OpenAPIHono): the routes of api-routes.ts over a RunPlace (a folder serve
 * drives, or a fleet), behind a bearer token, with the console's actions (run-actions.ts) for
 * what a person decides. Every JSON body leaves through one function that takes the process's
 * secrets out of it, as does every event of a stream.
 */
import { createHash } from 'node:crypto';
import { OpenAPIHono, type z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { HTTPException } from 'hono/http-exception';
import { streamSSE } from 'hono/streaming';
import { type Caller, maySee, maySteer, type TokenCheck } from '../access/caller.ts';
import type { ApiErrorBody } from '../client/api-types.ts';
import { MAX_BODY_BYTES } from '../console/console-app.ts';
import { controlFor, decideFor, signalFor } from '../console/run-actions.ts';
import { checkTenant, TenantError } from '../core/tenant.ts';
import { RunIdTakenError } from '../runtime/attach-run.ts';
import { RunIdError } from '../store/run-id.ts';
import { DurableAgentError } from '../util/durable-agent-error.ts';
import { redactSecrets } from '../util/redact.ts';
import { apiRunOf, endingOf } from './api-run.ts';
import {
  answerRoute,
  cancelRoute,
  decisionRoute,
  getRunRoute,
  listRunsRoute,
  pauseRoute,
  runEventsRoute,
  signalRoute,
  startRunRoute,
  unpauseRoute,
} from './api-routes.ts';
import { newRunIdOf } from './folder-place.ts';
import { RunEventTail } from './run-event-tail.ts';
import type { FoundRun, RunPlace } from './run-place.ts';
import { ApiRequestError, ServeUnknownAgentError } from './serve-errors.ts';

export interface ServeAppOptions {
  place: RunPlace;
  tokens: TokenCheck;
  /** The origins a browser page may call the API from (CORS); none: no cross-origin page may. */
  corsOrigins?: readonly string[] | undefined;
  /** Values that never leave in a body: the API keys of the environment, the tokens. */
  secrets?: readonly string[] | undefined;
  /** A live stream says it is still there this often (default 15 s). */
  heartbeatMs?: number | undefined;
  /** The version in the OpenAPI document's info. */
  version: string;
}

type Env = { Variables: { caller: Caller } };

export const DEFAULT_LIST_LIMIT = 50;
const HEARTBEAT_MS = 15_000;
export const OPENAPI_PATH = '/v1/openapi.json';

export function serveApp(options: ServeAppOptions): OpenAPIHono<Env> {
  const { place, tokens } = options;
  const secrets = [...(options.secrets ?? [])];
  const clean = (text: string) => redactSecrets(text, secrets);
  const app = new OpenAPIHono<Env>({
    defaultHook: (result, c) => {
      if (!result.success) return c.json(errorBody('invalid', `The request is not one the API takes: ${issueWords(result.error)}. Nothing was done.`), 400);
    },
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer NAME:SECRET' });

  if (options.corsOrigins?.length) {
    app.use(
      '/v1/*',
      cors({
        origin: [...options.corsOrigins],
        allowMethods: ['GET', 'POST'],
        allowHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'Last-Event-ID'],
        maxAge: 600,
      }),
    );
  }
  app.use('*', async (c, next) => {
    await next();
    c.header('x-content-type-options', 'nosniff');
    c.header('cache-control', 'no-store');
    // Every JSON body leaves through here: no secret of the process in any answer.
    if (c.res.headers.get('content-type')?.startsWith('application/json')) {
      const text = await c.res.text();
      c.res = new Response(clean(text), { status: c.res.status, headers: c.res.headers });
    }
  });
  app.use('/v1/*', async (c, next) => {
    if (c.req.path === OPENAPI_PATH) return next();
    const caller = tokens.callerOf(c.req.header('authorization'));
    if (!caller) {
      c.header('www-authenticate', 'Bearer');
      return c.json(errorBody('unauthorized', 'No token, or one this server does not know: send Authorization: Bearer NAME:SECRET, a token the server was given.'), 401);
    }
    c.set('caller', caller);
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD' && !maySteer(caller)) {
      return c.json(errorBody('forbidden', `The token ${caller.name} may read runs, not steer them: use a token that may steer. Nothing was done.`), 403);
    }
    return next();
  });
  app.use(
    '/v1/*',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => {
        c.header('connection', 'close');
        return c.json(errorBody('too-large', `The body is larger than ${MAX_BODY_BYTES / 1024 / 1024} MiB, more than any request of the API sends. Nothing was done.`), 413);
      },
    }),
  );

  app.onError((error, c) => {
    const [status, code] = statusOf(error);
    const message = status === 500 ? `The server could not do it: ${error.message}` : error.message;
    return c.json(errorBody(code, message), status);
  });
  app.notFound((c) => c.json(errorBody('not-found', `No route ${c.req.method} ${c.req.path}: the routes are in ${OPENAPI_PATH}.`), 404));

  /** The run of the id when the caller may see it; a run of another tenant is "not found" alike. */
  const visible = async (c: Context<Env>, runId: string): Promise<FoundRun> => {
    const found = await place.find(runId);
    if (!found || !maySee(c.get('caller'), found.summary.tenant)) throw new ApiRequestError(404, 'not-found', `No run ${runId} here: check the id (GET /v1/runs lists the runs you may see).`);
    return found;
  };
  const steerable = async (c: Context<Env>, runId: string) => {
    const found = await visible(c, runId);
    if (!found.handle) throw new ApiRequestError(409, 'conflict', `Run ${runId} is queued and no worker has started it yet: nothing can be sent to it until one has. Nothing was done.`);
    return found.handle;
  };
  const accepted = (c: Context<Env>, runId: string) => {
    place.steered(runId);
    return c.json({ accepted: true as const, runId }, 202);
  };

  app.openapi(startRunRoute, async (c) => {
    const caller = c.get('caller');
    const body = c.req.valid('json');
    const key = c.req.valid('header')['idempotency-key'];
    if (caller.tenant !== null && body.tenant !== undefined && body.tenant !== caller.tenant) {
      throw new ApiRequestError(403, 'forbidden', `The token ${caller.name} starts runs of its tenant only (${caller.tenant}): leave tenant out. Nothing was started.`);
    }
    const tenant = caller.tenant ?? checkTenant(body.tenant);
    const runId = body.runId ?? (key !== undefined ? runIdOfKey(caller, key) : newRunIdOf(body.agent));
    const before = await place.find(runId);
    // Another tenant's run of that id is not said to exist: the id is taken, as any id of a different run.
    if (before && !maySee(caller, before.summary.tenant)) throw new RunIdTakenError(runId, 'this server', ['run id: taken by another run']);
    const { created } = await place.start({ agent: body.agent, task: body.task, runId, tenant });
    const found = await place.find(runId);
    if (!found) throw new ApiRequestError(404, 'not-found', `Run ${runId} was started and is gone already (pruned?): start it again.`);
    return c.json({ run: apiRunOf(found.summary, found.store ? await endingOf(found.summary, found.store) : undefined), created }, created ? 201 : 200);
  });

  app.openapi(getRunRoute, async (c) => {
    const { id } = c.req.valid('param');
    const found = await visible(c, id);
    return c.json({ run: apiRunOf(found.summary, found.store ? await endingOf(found.summary, found.store) : undefined) }, 200);
  });

  app.openapi(listRunsRoute, async (c) => {
    const caller = c.get('caller');
    const query = c.req.valid('query');
    const limit = query.limit ?? DEFAULT_LIST_LIMIT;
    // A tenant's token sees its own tenant's runs whatever ?tenant= says (another: none).
    if (caller.tenant !== null && query.tenant !== undefined && query.tenant !== caller.tenant) return c.json({ runs: [], next: null }, 200);
    const page = await place.list({ category: query.state, tenant: caller.tenant ?? query.tenant, cursor: query.cursor, limit });
    const runs = await Promise.all(
      page.runs.map(async (summary) => {
        const found = summary.category === 'done' || summary.category === 'failed' || summary.category === 'cancelled' || summary.category === 'stopped' ? await place.find(summary.runId) : null;
        return apiRunOf(summary, found?.store ? await endingOf(summary, found.store) : undefined);
      }),
    );
    return c.json({ runs, next: page.next }, 200);
  });

  app.openapi(runEventsRoute, async (c) => {
    const { id } = c.req.valid('param');
    const found = await visible(c, id);
    const store = found.store!;
    const lastEventId = c.req.valid('header')['last-event-id'];
    const given = lastEventId !== undefined && /^-?\d+$/.test(lastEventId.trim()) ? Number(lastEventId.trim()) : c.req.valid('query').after;
    const tail = new RunEventTail(store, given ?? -1);
    const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
    return streamSSE(c, async (stream) => {
      let open = true;
      const text: string[] = [];
      // Heard before the first look at the journal: no text of a reply after it is missed.
      const unfollow = await place.followText(id, (piece) => text.push(piece));
      stream.onAbort(() => {
        open = false;
      });
      let quietSince = Date.now();
      try {
        while (open) {
          if (text.length) {
            // The pieces since the last look, as one event: a browser need not draw each token.
            await stream.writeSSE({ event: 'text-delta', data: clean(JSON.stringify({ type: 'text-delta', text: text.splice(0).join('') })) });
            quietSince = Date.now();
          }
          let ended = false;
          for (const { seq, events } of await tail.next()) {
            // Only a record's last event carries its id: a connection cut between two events of one
            // record resumes (Last-Event-ID) before that record, and is sent all of it again.
            for (const [at, event] of events.entries()) {
              await stream.writeSSE({ ...(at === events.length - 1 ? { id: String(seq) } : {}), event: event.type, data: clean(JSON.stringify(event)) });
              if (event.type === 'end') ended = true;
            }
            quietSince = Date.now();
          }
          if (ended || tail.ended) return;
          if (Date.now() - quietSince >= heartbeatMs) {
            await stream.write(': still here\n\n');
            quietSince = Date.now();
          }
          await stream.sleep(place.pollMs);
        }
      } catch (error) {
        // A journal that cannot be read ends the stream with why, as a comment: a reconnect tries again.
        await stream.write(`: ${clean((error as Error).message).replace(/\n/g, ' ')}\n\n`);
      } finally {
        unfollow();
      }
    });
  });

  app.openapi(decisionRoute, async (c) => {
    const { id } = c.req.valid('param');
    const body = c.req.valid('json');
    const run = await steerable(c, id);
    await decideFor(run, { toolUseId: body.toolUseId, verdict: body.verdict === 'approve' ? 'approved' : 'denied', reason: body.reason, input: body.input }, c.get('caller').name);
    return accepted(c, id);
  });
  app.openapi(answerRoute, async (c) => {
    const { id } = c.req.valid('param');
    const body = c.req.valid('json');
    const run = await steerable(c, id);
    await decideFor(run, { toolUseId: body.toolUseId, verdict: 'answered', text: body.answer }, c.get('caller').name);
    return accepted(c, id);
  });
  app.openapi(signalRoute, async (c) => {
    const { id } = c.req.valid('param');
    const body = c.req.valid('json');
    const run = await steerable(c, id);
    await signalFor(run, { name: body.name, data: body.data }, c.get('caller').name);
    return accepted(c, id);
  });
  app.openapi(cancelRoute, async (c) => {
    const { id } = c.req.valid('param');
    const reason = c.req.valid('json')?.reason?.trim();
    const run = await steerable(c, id);
    await controlFor(run, { kind: 'cancel', reason: reason ? reason : null }, c.get('caller').name);
    return accepted(c, id);
  });
  for (const [route, kind] of [
    [pauseRoute, 'pause'],
    [unpauseRoute, 'unpause'],
  ] as const) {
    app.openapi(route, async (c) => {
      const { id } = c.req.valid('param');
      const run = await steerable(c, id);
      await controlFor(run, { kind }, c.get('caller').name);
      return accepted(c, id);
    });
  }

  app.doc31(OPENAPI_PATH, {
    openapi: '3.1.0',
    info: {
      title: 'durable-agent serve',
      version: options.version,
      description: 'Start, follow and steer durable agent runs. Every route but this document needs Authorization: Bearer NAME:SECRET.',
    },
  });
  return app;
}

function errorBody(code: string, message: string): ApiErrorBody {
  return { error: { code, message } };
}

/** The issues of a request that failed its schema, in words: "task: Too small…; verdict: Invalid option…". */
function issueWords(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.length ? issue.path.join('.') : 'the request'}: ${issue.message}`).join('; ');
}

/**
 * The run id an Idempotency-Key stands for: the same key (of the same tenant's caller) is always
 * the same id, so a retry finds the run the first request started, in this process or another,
 * before a restart or after, with no table of keys to keep.
 */
export function runIdOfKey(caller: Caller, key: string): string {
  return `key-${createHash('sha256').update(`${caller.tenant ?? '*'}\u0000${key}`).digest('hex').slice(0, 32)}`;
}

function statusOf(error: Error): [400 | 401 | 403 | 404 | 409 | 413 | 500, string] {
  if (error instanceof ApiRequestError) return [error.status, error.code];
  if (error instanceof HTTPException) return error.status === 413 ? [413, 'too-large'] : [400, 'invalid'];
  if (error instanceof ServeUnknownAgentError || error instanceof TenantError || error instanceof RunIdError) return [400, 'invalid'];
  if (error instanceof DurableAgentError && error.kind === 'refused') return [409, 'conflict'];
  return [500, 'internal'];
}
