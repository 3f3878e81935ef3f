import { createReceiver } from '@churn-risk/core';
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import { describe, expectTypeOf, it } from 'vitest';
import { createMiddleware } from './index.js';

const receiver = createReceiver({ secret: 'whsec_types' });

describe('koa adapter types', () => {
  it('createMiddleware returns a Koa Middleware and needs a receiver', () => {
    expectTypeOf(createMiddleware(receiver)).toEqualTypeOf<Middleware>();
    // @ts-expect-error not a receiver
    createMiddleware({ handle: () => undefined });
  });

  it('mounts on @koa/router and on the app, also with typed state', () => {
    new Router().post('/webhooks/churn-risk', createMiddleware(receiver));
    new Router<{ user?: string }>().all('/webhooks/churn-risk', createMiddleware(receiver));
    new Koa().use(createMiddleware(receiver));
  });
});
