/**
 * The routes of the HTTP API, version 1, declared once: the request each validates and the
 * answers each gives. The OpenAPI document (GET /v1/openapi.json) is made from these.
 */
import { createRoute, z } from '@hono/zod-openapi';
import {
  AnswerBodySchema,
  CancelBodySchema,
  DecisionBodySchema,
  ErrorBodySchema,
  EventsQuerySchema,
  GetRunAnswerSchema,
  ListQuerySchema,
  ListRunsAnswerSchema,
  RunEventSchema,
  RunIdParamSchema,
  SignalBodySchema,
  StartHeadersSchema,
  StartRunAnswerSchema,
  StartRunBodySchema,
  SteerAnswerSchema,
} from './api-schemas.ts';

const json = <T extends z.ZodType>(schema: T, description: string) => ({ content: { 'application/json': { schema } }, description });
const error = (description: string) => json(ErrorBodySchema, description);
const security = [{ bearer: [] }];

/** The answers every route may give besides its own. */
const READ_ERRORS = {
  400: error("The request is not one the API takes (code 'invalid'): what is wrong, in words."),
  401: error("No token, or one the server does not know (code 'unauthorized')."),
  404: error("No such run, or one of a tenant the token may not see (code 'not-found')."),
} as const;

const WRITE_ERRORS = {
  ...READ_ERRORS,
  403: error("The token may read, not steer (code 'forbidden')."),
  409: error("The run cannot take the request as it stands (code 'conflict'): a call that waits for nothing, a run not yet started."),
  413: error("The body is larger than 1 MiB (code 'too-large')."),
} as const;

export const startRunRoute = createRoute({
  method: 'post',
  path: '/v1/runs',
  summary: 'Start a run of an agent, or find the one started under the same id or Idempotency-Key',
  security,
  request: { headers: StartHeadersSchema, body: { content: { 'application/json': { schema: StartRunBodySchema } }, required: true } },
  responses: {
    201: json(StartRunAnswerSchema, 'The run was started.'),
    200: json(StartRunAnswerSchema, 'The same request had started it already: nothing new was started.'),
    ...WRITE_ERRORS,
    409: error("A run of that id (or Idempotency-Key) was started with another agent, task or tenant (code 'conflict')."),
  },
});

export const getRunRoute = createRoute({
  method: 'get',
  path: '/v1/runs/{id}',
  summary: 'A run: where it stands, what it waits for, how it ended',
  security,
  request: { params: RunIdParamSchema },
  responses: { 200: json(GetRunAnswerSchema, 'The run.'), ...READ_ERRORS },
});

export const listRunsRoute = createRoute({
  method: 'get',
  path: '/v1/runs',
  summary: 'The runs the token may see, newest save first, a page at a time',
  security,
  request: { query: ListQuerySchema },
  responses: { 200: json(ListRunsAnswerSchema, 'A page of runs, and the cursor of the next.'), ...READ_ERRORS },
});

export const runEventsRoute = createRoute({
  method: 'get',
  path: '/v1/runs/{id}/events',
  summary: "A run's events as Server-Sent Events, live, from the record after Last-Event-ID (or ?after=) on, until its end",
  description:
    'Each event\'s SSE `event` is its type and its `data` a RunEvent as JSON. Every event drawn from the journal has the SSE id of its record\'s seq; ' +
    'a reconnect with Last-Event-ID (or ?after=N) gets every event of the records after it, none twice. text-delta events (the model\'s text as it streams, ' +
    'where the server drives the run itself) have no id. The stream ends after the `end` event; a comment line every 15 seconds keeps proxies from closing a quiet one.',
  security,
  request: {
    params: RunIdParamSchema,
    query: EventsQuerySchema,
    headers: z.object({ 'last-event-id': z.string().optional().openapi({ param: { name: 'last-event-id', in: 'header' } }) }),
  },
  responses: {
    200: { content: { 'text/event-stream': { schema: RunEventSchema } }, description: 'The stream of RunEvent.' },
    ...READ_ERRORS,
  },
});

const STEERED = { 202: json(SteerAnswerSchema, "The request is in the run's inbox: the process that drives the run takes it up."), ...WRITE_ERRORS };

const steerRoute = <T extends z.ZodType>(path: string, summary: string, body: T, required = true) =>
  createRoute({
    method: 'post',
    path: `/v1/runs/{id}/${path}`,
    summary,
    security,
    request: { params: RunIdParamSchema, body: { content: { 'application/json': { schema: body } }, required } },
    responses: STEERED,
  });

const controlRoute = (path: string, summary: string) =>
  createRoute({ method: 'post', path: `/v1/runs/{id}/${path}`, summary, security, request: { params: RunIdParamSchema }, responses: STEERED });

export const decisionRoute = steerRoute('decisions', 'Approve or deny a call that waits for a person', DecisionBodySchema);
export const answerRoute = steerRoute('answers', 'Answer a question the model asked (ask_user)', AnswerBodySchema);
export const signalRoute = steerRoute('signals', 'Send the event a wait call waits for', SignalBodySchema);
export const cancelRoute = steerRoute('cancel', 'Cancel the run: it ends cancelled at its next step', CancelBodySchema, false);
export const pauseRoute = controlRoute('pause', 'Pause the run: it stops at its next step until unpaused');
export const unpauseRoute = controlRoute('unpause', 'Unpause the run: it goes on from where it stopped');
