import { createReceiver } from '@churn-risk/core';
import type {
  ALBEvent,
  ALBHandler,
  APIGatewayProxyEvent,
  APIGatewayProxyEventV2,
  APIGatewayProxyHandler,
  APIGatewayProxyHandlerV2,
  LambdaFunctionURLHandler,
} from 'aws-lambda';
import { describe, expectTypeOf, it } from 'vitest';
import {
  createLambdaHandler,
  type AlbResult,
  type HttpApiResult,
  type LambdaHandler,
  type LambdaHttpEvent,
  type LambdaHttpResult,
  type RestApiResult,
} from './index.js';

const receiver = createReceiver({ secret: 'whsec_types' });
const handler = createLambdaHandler(receiver);

describe('lambda adapter types', () => {
  it('createLambdaHandler returns a LambdaHandler and needs a receiver', () => {
    expectTypeOf(handler).toEqualTypeOf<LambdaHandler>();
    // @ts-expect-error not a receiver
    createLambdaHandler({ handle: () => undefined });
  });

  it('fits the handler types of @types/aws-lambda', () => {
    expectTypeOf(handler).toExtend<APIGatewayProxyHandler>();
    expectTypeOf(handler).toExtend<APIGatewayProxyHandlerV2>();
    expectTypeOf(handler).toExtend<LambdaFunctionURLHandler>();
    expectTypeOf(handler).toExtend<ALBHandler>();
    // The natural lines compile.
    const rest: APIGatewayProxyHandler = createLambdaHandler(receiver);
    const http: APIGatewayProxyHandlerV2 = createLambdaHandler(receiver);
    const alb: ALBHandler = createLambdaHandler(receiver);
    expectTypeOf([rest, http, alb]).not.toBeNever();
  });

  it('answers each event type with its own result shape', () => {
    expectTypeOf(handler({} as APIGatewayProxyEvent)).resolves.toEqualTypeOf<RestApiResult>();
    expectTypeOf(handler({} as APIGatewayProxyEventV2)).resolves.toEqualTypeOf<HttpApiResult>();
    expectTypeOf(handler({} as ALBEvent)).resolves.toEqualTypeOf<AlbResult>();
    expectTypeOf(handler({} as LambdaHttpEvent)).resolves.toEqualTypeOf<LambdaHttpResult>();
    // @ts-expect-error an SQS batch is not an HTTP event
    void handler({ Records: [] });
  });

  it('needs no @types/aws-lambda in its own API', () => {
    expectTypeOf<Parameters<LambdaHandler>[0]>().toEqualTypeOf<LambdaHttpEvent>();
  });
});
