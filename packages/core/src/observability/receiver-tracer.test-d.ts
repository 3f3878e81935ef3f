import type { Tracer } from '@opentelemetry/api';
import { describe, expectTypeOf, it } from 'vitest';
import type { ReceiverOptions, ReceiverTracer } from '@churn-risk/core';

describe('the tracer option type', () => {
  it('takes any Tracer of @opentelemetry/api, without core naming the API in it', () => {
    expectTypeOf<Tracer>().toExtend<ReceiverTracer>();
    expectTypeOf<Tracer>().toExtend<NonNullable<ReceiverOptions['tracer']>>();
    expectTypeOf<{ startSpan: () => void }>().not.toExtend<ReceiverTracer>();
  });
});
