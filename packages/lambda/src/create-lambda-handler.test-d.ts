import { createReceiver, type Receiver } from '@churn-risk/core';
import { type PushQueue } from '@churn-risk/core/store';
import type {
  ALBEvent,
  ALBHandler,
  APIGatewayProxyEvent,
  APIGatewayProxyEventV2,
  APIGatewayProxyHandler,
  APIGatewayProxyHandlerV2,
  LambdaFunctionURLHandler,
  SQSBatchResponse,
  SQSEvent,
  SQSHandler,
} from 'aws-lambda';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { describe, expectTypeOf, it } from 'vitest';
import {
  createLambdaHandler,
  createSqsQueue,
  type SqsBatchResponse,
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
    expectTypeOf(handler({} as SQSEvent)).resolves.toEqualTypeOf<SqsBatchResponse>();
    // @ts-expect-error records without the fields Lambda gives them are neither SQS nor HTTP
    void handler({ Records: [{ body: '{}' }] });
  });

  it('fits SQSHandler in queue mode, with the clients of the AWS SDK', () => {
    const queue = createSqsQueue({
      queueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/alerts',
      dedupeTable: 'churn-risk-identities',
      failedTable: 'churn-risk-failed',
      sqs: new SQSClient({}),
      dynamodb: new DynamoDBClient({}),
      maxStalls: 3,
    });
    expectTypeOf(queue).toExtend<PushQueue>();
    const sqsHandler: SQSHandler = createLambdaHandler(createReceiver({ secret: 's', queue }));
    expectTypeOf(sqsHandler).not.toBeNever();
    expectTypeOf(createLambdaHandler).parameters.toEqualTypeOf<[Receiver]>();
    // @ts-expect-error the handler consumes with the receiver's own queue: no queue option
    createLambdaHandler(receiver, { queue });
    const { batchItemFailures } = {} as SQSBatchResponse;
    expectTypeOf<SqsBatchResponse>().toExtend<SQSBatchResponse>();
    expectTypeOf(batchItemFailures).not.toBeNever();
    // @ts-expect-error a misspelt option
    createSqsQueue({ queueURL: 'x', dedupeTable: 'a', failedTable: 'b' });
    // @ts-expect-error not an AWS SDK client
    createSqsQueue({ queueUrl: 'x', dedupeTable: 'a', failedTable: 'b', sqs: {} });
  });

  it('needs no @types/aws-lambda in its own API', () => {
    expectTypeOf<Parameters<LambdaHandler>[0]>().toEqualTypeOf<LambdaHttpEvent>();
  });
});
