/**
 * The HTTP API's bodies and answers as zod schemas: they validate what a request sends, and the
 * OpenAPI document is made from them. Each is held equal to its plain type of the wire format
 * (src/client/api-types.ts) by a type test, so the document, the validation and the client's
 * types cannot drift apart.
 */
import { z } from '@hono/zod-openapi';

export const RunCategorySchema = z.enum(['running', 'waiting', 'paused', 'failed', 'stopped', 'cancelled', 'done', 'unreadable']).openapi('RunCategory');

export const WaitingOnSchema = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('call'), toolUseId: z.string(), name: z.string().nullable(), needs: z.string().nullable(), since: z.number().nullable() }),
    z.object({ kind: z.literal('runs'), runIds: z.array(z.string()) }),
    z.object({ kind: z.literal('agent'), agent: z.string() }),
  ])
  .openapi('WaitingOn');

export const RunSchema = z
  .object({
    runId: z.string(),
    source: z.enum(['folder', 'fleet']),
    state: z.string().nullable().openapi({ description: "The machine's state name ('awaitingModel', 'awaitingDecision', 'done'…); null when unreadable." }),
    category: RunCategorySchema,
    task: z.string(),
    turn: z.number(),
    maxTurns: z.number().nullable(),
    tokens: z.number().nullable(),
    costUsd: z.number().nullable(),
    updatedAt: z.number().nullable().openapi({ description: 'Epoch milliseconds of its last record.' }),
    waitsFor: z.string().nullable().openapi({ description: 'What it waits for, in words; null when it waits for nothing.' }),
    waitingOn: WaitingOnSchema.nullable(),
    agent: z.object({ name: z.string(), version: z.string().nullable() }).nullable(),
    pausedBy: z.string().nullable(),
    tenant: z.string(),
    result: z.string().nullable().openapi({ description: "The model's last reply text once the run is done; null before." }),
    problem: z.string().nullable().openapi({ description: 'Why it failed or stopped, in words; null otherwise.' }),
  })
  .openapi('Run');

/** A run id as the stores take it: 1 to 128 letters, digits, ".", "_" or "-" (src/store/run-id.ts checks it again). */
const RUN_ID = z.string().min(1).max(128).regex(/^[A-Za-z0-9._-]+$/, 'a run id is 1 to 128 letters, digits, ".", "_" or "-"');

export const StartRunBodySchema = z
  .object({
    agent: z.string().min(1).openapi({ description: 'The agent to run, by its name.' }),
    task: z.string().min(1).openapi({ description: 'What the run is to do: its first user message.' }),
    runId: RUN_ID.optional().openapi({ description: "The run's id: a retry with it finds the run it started (default: one is made)." }),
    tenant: z.string().optional().openapi({ description: "Whose the run is: only a token of every tenant may name one; a tenant's token starts runs of its own tenant." }),
  })
  .openapi('StartRunBody');

export const StartRunAnswerSchema = z.object({ run: RunSchema, created: z.boolean() }).openapi('StartRunAnswer');
export const GetRunAnswerSchema = z.object({ run: RunSchema }).openapi('GetRunAnswer');
export const ListRunsAnswerSchema = z
  .object({ runs: z.array(RunSchema), next: z.string().nullable().openapi({ description: 'The cursor of the following page; null at the end.' }) })
  .openapi('ListRunsAnswer');

export const DecisionBodySchema = z
  .object({
    toolUseId: z.string().min(1),
    verdict: z.enum(['approve', 'deny']),
    reason: z.string().optional(),
    input: z.unknown().optional().openapi({ description: "An edited input the tool runs with instead of the model's (where the tool allows it)." }),
  })
  .openapi('DecisionBody');

export const AnswerBodySchema = z.object({ toolUseId: z.string().min(1), answer: z.string() }).openapi('AnswerBody');

export const SignalBodySchema = z.object({ name: z.string().min(1), data: z.unknown().optional() }).openapi('SignalBody');

/** cancel takes a reason; pause and unpause take nothing (an empty or absent body). */
export const CancelBodySchema = z.object({ reason: z.string().optional() }).openapi('CancelBody');

export const SteerAnswerSchema = z.object({ accepted: z.literal(true), runId: z.string() }).openapi('SteerAnswer');

export const ErrorBodySchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ description: "'unauthorized', 'forbidden', 'not-found', 'conflict', 'invalid', 'too-large', 'internal'." }),
      message: z.string().openapi({ description: 'What happened and what to do next, in words.' }),
    }),
  })
  .openapi('ErrorBody');

export const RunIdParamSchema = z.object({ id: RUN_ID.openapi({ param: { name: 'id', in: 'path' }, example: 'invoice-acme' }) });

export const ListQuerySchema = z.object({
  state: RunCategorySchema.optional().openapi({ param: { name: 'state', in: 'query' } }),
  tenant: z.string().optional().openapi({ param: { name: 'tenant', in: 'query' } }),
  cursor: z.string().optional().openapi({ param: { name: 'cursor', in: 'query' }, description: "The `next` of the page before." }),
  limit: z.coerce.number().int().min(1).max(500).optional().openapi({ param: { name: 'limit', in: 'query' }, description: 'At most this many runs (default 50).' }),
});

export const EventsQuerySchema = z.object({
  after: z.coerce.number().int().min(-1).optional().openapi({ param: { name: 'after', in: 'query' }, description: 'The events of the records after this seq (as Last-Event-ID).' }),
});

export const StartHeadersSchema = z.object({
  'idempotency-key': z.string().min(1).max(200).optional().openapi({ param: { name: 'idempotency-key', in: 'header' }, description: 'A retry with the same key finds the run the first request started.' }),
});

/** One event of GET /v1/runs/:id/events, as the `data` of its SSE message (the SSE `event` is its type). */
export const RunEventSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('state'), seq: z.number(), at: z.number(), state: z.string(), turn: z.number().nullable() }),
    z.object({ type: z.literal('text-delta'), text: z.string() }),
    z.object({ type: z.literal('reply'), seq: z.number(), text: z.string(), supersedesDeltas: z.literal(true) }),
    z.object({ type: z.literal('tool-call'), seq: z.number(), toolUseId: z.string(), name: z.string(), input: z.unknown() }),
    z.object({ type: z.literal('tool-result'), seq: z.number(), toolUseId: z.string(), isError: z.boolean(), content: z.unknown() }),
    z.object({ type: z.literal('waiting'), seq: z.number(), waitingOn: WaitingOnSchema, waitsFor: z.string() }),
    z.object({ type: z.literal('end'), seq: z.number(), state: z.string(), category: RunCategorySchema, result: z.string().nullable(), problem: z.string().nullable() }),
  ])
  .openapi('RunEvent');
