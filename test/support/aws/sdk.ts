/**
 * The AWS SDK for the tests, loaded as @churn-risk/lambda loads it: with require(), so its
 * CommonJS build (a vitest config's `module` export condition would pick its `dist-es` build, whose
 * extensionless imports Node cannot load).
 */
import type * as DynamoDbSdk from '@aws-sdk/client-dynamodb';
import type * as SqsSdk from '@aws-sdk/client-sqs';
import { createRequire } from 'node:module';

// The SDK warns once per process that its releases after January 2027 need Node 22.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const load = createRequire(import.meta.url);

/** `@aws-sdk/client-sqs`. */
export const sqsSdk = load('@aws-sdk/client-sqs') as typeof SqsSdk;
/** `@aws-sdk/client-dynamodb`. */
export const dynamoDbSdk = load('@aws-sdk/client-dynamodb') as typeof DynamoDbSdk;

/** The region the emulators are called in. */
export const AWS_REGION = 'us-east-1';
