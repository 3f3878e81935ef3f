import { createReceiver } from '@churn-risk/core';
import express, { type RequestHandler } from 'express';
import { describe, expectTypeOf, it } from 'vitest';
import { createMiddleware, rawBodySaver } from './index.js';

const receiver = createReceiver({ secret: 'whsec_types' });

describe('express adapter types', () => {
  it('createMiddleware returns an Express RequestHandler and needs a receiver', () => {
    expectTypeOf(createMiddleware(receiver)).toEqualTypeOf<RequestHandler>();
    // @ts-expect-error not a receiver
    createMiddleware({ handle: () => undefined });
  });

  it('rawBodySaver fits express.json({ verify })', () => {
    expectTypeOf(rawBodySaver).toExtend<
      NonNullable<NonNullable<Parameters<typeof express.json>[0]>['verify']>
    >();
  });
});
