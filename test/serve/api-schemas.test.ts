/**
 * The route schemas of `durable-agent serve` are the wire format of src/client/api-types.ts, field
 * for field: a change to one without the other fails here (the client is written against the types).
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { z } from '@hono/zod-openapi';
import type {
  AnswerBody,
  ApiErrorBody,
  ApiRun,
  ApiRunCategory,
  ApiWaitingOn,
  DecisionBody,
  GetRunAnswer,
  ListRunsAnswer,
  RunEvent,
  SignalBody,
  StartRunAnswer,
  StartRunBody,
  SteerAnswer,
} from '../../src/client/api-types.ts';
import type {
  AnswerBodySchema,
  DecisionBodySchema,
  ErrorBodySchema,
  GetRunAnswerSchema,
  ListRunsAnswerSchema,
  RunCategorySchema,
  RunEventSchema,
  RunSchema,
  SignalBodySchema,
  StartRunAnswerSchema,
  StartRunBodySchema,
  SteerAnswerSchema,
  WaitingOnSchema,
} from '../../src/serve/api-schemas.ts';

describe('the API schemas are the wire format', () => {
  it('a run, its category and what it waits on', () => {
    expectTypeOf<z.infer<typeof RunCategorySchema>>().toEqualTypeOf<ApiRunCategory>();
    expectTypeOf<z.infer<typeof WaitingOnSchema>>().toEqualTypeOf<ApiWaitingOn>();
    expectTypeOf<z.infer<typeof RunSchema>>().toEqualTypeOf<ApiRun>();
  });

  it('every body a request sends', () => {
    expectTypeOf<z.infer<typeof StartRunBodySchema>>().toEqualTypeOf<StartRunBody>();
    expectTypeOf<z.infer<typeof DecisionBodySchema>>().toEqualTypeOf<DecisionBody>();
    expectTypeOf<z.infer<typeof AnswerBodySchema>>().toEqualTypeOf<AnswerBody>();
    expectTypeOf<z.infer<typeof SignalBodySchema>>().toEqualTypeOf<SignalBody>();
  });

  it('every answer, the error body and the events of the stream', () => {
    expectTypeOf<z.infer<typeof StartRunAnswerSchema>>().toEqualTypeOf<StartRunAnswer>();
    expectTypeOf<z.infer<typeof GetRunAnswerSchema>>().toEqualTypeOf<GetRunAnswer>();
    expectTypeOf<z.infer<typeof ListRunsAnswerSchema>>().toEqualTypeOf<ListRunsAnswer>();
    expectTypeOf<z.infer<typeof SteerAnswerSchema>>().toEqualTypeOf<SteerAnswer>();
    expectTypeOf<z.infer<typeof ErrorBodySchema>>().toEqualTypeOf<ApiErrorBody>();
    expectTypeOf<z.infer<typeof RunEventSchema>>().toEqualTypeOf<RunEvent>();
  });
});
