/**
 * @churn-risk/lambda: an AWS Lambda handler for churn-risk webhook alerts, for API Gateway (REST
 * and HTTP APIs), Lambda function URLs and Application Load Balancers, in memory or in queue mode
 * (SQS and DynamoDB).
 */
export { createLambdaHandler } from './create-lambda-handler.js';
export {
  createSweepHandler,
  type LambdaSweepContext,
  type LambdaSweepHandler,
  type LambdaSweepOptions,
} from './create-sweep-handler.js';
export type {
  AlbEvent,
  AlbResult,
  HttpApiEvent,
  HttpApiResult,
  LambdaEventHeaders,
  LambdaEventMultiValueHeaders,
  LambdaHandler,
  LambdaHttpEvent,
  LambdaHttpResult,
  LambdaResult,
  RestApiEvent,
  RestApiResult,
} from './lambda-events.js';
export { createSqsQueue, type SqsQueue } from './sqs/sqs-queue.js';
export { SQS_QUEUE_DEFAULTS, type SqsQueueOptions } from './sqs/sqs-options.js';
export {
  createDynamoOrder,
  type DynamoOrder,
  type DynamoOrderOptions,
} from './sqs/dynamo-order.js';
export type { AwsSdkClient } from './sqs/aws-sdk.js';
export { SqsQueueError, type SqsResourceOption } from './sqs/sqs-errors.js';
export type { SqsBatchResponse, SqsEvent, SqsRecord } from './sqs/sqs-events.js';
