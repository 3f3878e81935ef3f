/**
 * The parts of AWS Lambda's HTTP events and results this package reads and writes, as structural
 * types: the events of `@types/aws-lambda` (`APIGatewayProxyEvent`, `APIGatewayProxyEventV2`,
 * `ALBEvent`) are assignable to them, and the results to theirs, so no extra package is needed.
 */
import type { SqsBatchResponse, SqsEvent } from './sqs/sqs-events.js';

/** Single-value headers as API Gateway, function URLs and ALB give them. */
export type LambdaEventHeaders = Record<string, string | undefined>;

/** Multi-value headers (API Gateway REST, and ALB with multi-value headers turned on). */
export type LambdaEventMultiValueHeaders = Record<string, string[] | undefined>;

/** API Gateway REST API proxy event (payload format 1.0, also HTTP API with format 1.0). */
export interface RestApiEvent {
  httpMethod: string;
  /** The last value of each header; may be `null` when the request had none. */
  headers?: LambdaEventHeaders | null | undefined;
  /** Every value of each header. */
  multiValueHeaders?: LambdaEventMultiValueHeaders | null | undefined;
  body?: string | null | undefined;
  isBase64Encoded?: boolean | undefined;
}

/** API Gateway HTTP API event (payload format 2.0) and Lambda function URL event. */
export interface HttpApiEvent {
  version?: string | undefined;
  /** Lower-case names; repeated headers joined with commas. */
  headers?: LambdaEventHeaders | null | undefined;
  body?: string | null | undefined;
  isBase64Encoded?: boolean | undefined;
  requestContext: { http: { method: string } };
}

/** Application Load Balancer target event, with or without multi-value headers. */
export interface AlbEvent {
  httpMethod: string;
  /** Present unless the target group has multi-value headers turned on. */
  headers?: LambdaEventHeaders | null | undefined;
  /** Present when the target group has multi-value headers turned on. */
  multiValueHeaders?: LambdaEventMultiValueHeaders | null | undefined;
  body?: string | null | undefined;
  isBase64Encoded?: boolean | undefined;
  requestContext: { elb: { targetGroupArn?: string | undefined } };
}

/** Any of the HTTP events `createLambdaHandler` accepts. */
export type LambdaHttpEvent = RestApiEvent | HttpApiEvent | AlbEvent;

/** The answer to an API Gateway REST event. */
export interface RestApiResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded: false;
}

/** The answer to an HTTP API or function URL event (payload format 2.0). */
export interface HttpApiResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * The answer to an ALB event: `headers`, or `multiValueHeaders` when the request came with
 * multi-value headers (ALB then reads only those).
 */
export interface AlbResult {
  statusCode: number;
  /** For example `202 Accepted`. */
  statusDescription: string;
  headers?: Record<string, string>;
  multiValueHeaders?: Record<string, string[]>;
  body: string;
  isBase64Encoded: false;
}

/** Any of the answers `createLambdaHandler`'s handler returns. */
export type LambdaHttpResult = RestApiResult | HttpApiResult | AlbResult;

/** Any answer of `createLambdaHandler`'s handler: an HTTP result, or an SQS batch response. */
export type LambdaResult = LambdaHttpResult | SqsBatchResponse;

/**
 * The Lambda handler `createLambdaHandler` returns. Each event shape gets its own result shape; it
 * fits `APIGatewayProxyHandler`, `APIGatewayProxyHandlerV2`, `LambdaFunctionURLHandler`,
 * `ALBHandler` and (queue mode) `SQSHandler` of `@types/aws-lambda`. The second argument
 * (Lambda's `context`) is not used.
 */
export interface LambdaHandler {
  (event: SqsEvent, context?: unknown): Promise<SqsBatchResponse>;
  (event: AlbEvent, context?: unknown): Promise<AlbResult>;
  (event: HttpApiEvent, context?: unknown): Promise<HttpApiResult>;
  (event: RestApiEvent, context?: unknown): Promise<RestApiResult>;
  (event: LambdaHttpEvent, context?: unknown): Promise<LambdaHttpResult>;
}
