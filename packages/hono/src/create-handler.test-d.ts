import { createReceiver } from '@churn-risk/core';
import { type WaitUntil } from '@churn-risk/core/adapter';
import { Hono, type Context, type Handler } from 'hono';
import { describe, expectTypeOf, it } from 'vitest';
import { createHandler, executionContextWaitUntil, type HonoHandlerOptions } from './index.js';

const receiver = createReceiver({ secret: 'whsec_types' });

describe('hono adapter types', () => {
  it('createHandler returns a Hono Handler and needs a receiver', () => {
    expectTypeOf(createHandler(receiver)).toEqualTypeOf<Handler>();
    // @ts-expect-error not a receiver
    createHandler({ fetch: () => undefined });
  });

  it('mounts on apps with and without typed bindings', () => {
    new Hono().post('/webhooks/churn-risk', createHandler(receiver));
    new Hono<{ Bindings: { CHURN_RISK_WEBHOOK_SECRET: string } }>().all(
      '/webhooks/churn-risk',
      createHandler(receiver),
    );
  });

  it('takes a per-request waitUntil; executionContextWaitUntil is one', () => {
    expectTypeOf<NonNullable<HonoHandlerOptions['waitUntil']>>().toEqualTypeOf<
      (c: Context) => WaitUntil | undefined
    >();
    expectTypeOf(executionContextWaitUntil).toExtend<
      NonNullable<HonoHandlerOptions['waitUntil']>
    >();
    createHandler(receiver, { waitUntil: () => undefined });
    // @ts-expect-error waitUntil is chosen per request from the context, not passed as the platform's function
    createHandler(receiver, { waitUntil: (promise: Promise<unknown>) => void promise.then() });
  });
});
