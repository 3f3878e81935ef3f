import type { NextApiHandler } from 'next';
import type { NextRequest } from 'next/server.js';
import { createReceiver } from '@churn-risk/core';
import { describe, expectTypeOf, it } from 'vitest';
import { createPagesHandler, createRouteHandler, type NextHandlerOptions } from './index.js';

const receiver = createReceiver({ secret: 'whsec_types' });

describe('handler types', () => {
  it('createRouteHandler fits an App Router POST export (Request or NextRequest in, Response out)', () => {
    const POST = createRouteHandler(receiver);
    expectTypeOf(POST).toBeCallableWith(new Request('http://localhost'));
    expectTypeOf(POST).toExtend<(request: NextRequest) => Promise<Response>>();
  });

  it('createPagesHandler is a NextApiHandler', () => {
    expectTypeOf(createPagesHandler(receiver)).toExtend<NextApiHandler>();
  });

  it('waitUntil takes a promise and returns nothing; other options are refused', () => {
    expectTypeOf<NextHandlerOptions['waitUntil']>().toEqualTypeOf<
      ((promise: Promise<unknown>) => void) | undefined
    >();
    // @ts-expect-error an unknown option
    createRouteHandler(receiver, { after: true });
    // @ts-expect-error not a receiver
    createPagesHandler({ handle: () => undefined });
  });
});
