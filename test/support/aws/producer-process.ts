/**
 * A producer "function" for queue mode's process tests: a receiver on `createSqsQueue` (default
 * SDK clients, reaching the emulators through AWS_ENDPOINT_URL_*) behind a local stand-in for a
 * Lambda function URL, which turns each request into the event AWS sends and invokes the Lambda
 * handler. Env: SECRET, QUEUE_URL, DEDUPE_TABLE, FAILED_TABLE. Prints `listening on <url>`;
 * SIGTERM closes it.
 */
import { createReceiver } from '@churn-risk/core';
import { createLambdaHandler, createSqsQueue } from '@churn-risk/lambda';
import { startFunctionUrl } from '../../../examples/lambda/test/function-url-emulator.js';
import { requiredEnv } from '../durable-process.js';

const receiver = createReceiver({
  secret: requiredEnv('SECRET'),
  queue: createSqsQueue({
    queueUrl: requiredEnv('QUEUE_URL'),
    dedupeTable: requiredEnv('DEDUPE_TABLE'),
    failedTable: requiredEnv('FAILED_TABLE'),
  }),
});
receiver.on('churn_risk_alert', () => {
  throw new Error('a producer never runs handlers');
});
const functionUrl = await startFunctionUrl(createLambdaHandler(receiver));
console.log(`listening on ${functionUrl.url}`);
process.once('SIGTERM', () => {
  void functionUrl
    .close()
    .then(() => receiver.close({ timeoutMs: 10_000 }))
    .finally(() => process.exit(0));
});
