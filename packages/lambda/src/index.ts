/**
 * @churn-risk/lambda: an AWS Lambda handler for churn-risk webhook alerts, for API Gateway (REST
 * and HTTP APIs), Lambda function URLs and Application Load Balancers.
 */
export { createLambdaHandler } from './create-lambda-handler.js';
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
  RestApiEvent,
  RestApiResult,
} from './lambda-events.js';
