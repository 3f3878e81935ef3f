/**
 * A producer "function" for queue mode's process tests: a receiver on `createSqsQueue` (default
 * SDK clients, reaching the emulators through AWS_ENDPOINT_URL_*) behind a local stand-in for a
 * Lambda function URL, which turns each request into the event AWS sends and invokes the Lambda
 * handler. Env: SECRET, QUEUE_URL, DEDUPE_TABLE, FAILED_TABLE, REFUSE_SENDS_EVERY (n: every n-th
 * `SendMessage` fails, so that the delivery is answered 503 with its claim released; default
 * none). Prints `listening on <url>`; SIGTERM closes it.
 */
import { createReceiver } from '@churn-risk/core';
import { createLambdaHandler, createSqsQueue } from '@churn-risk/lambda';
import { startFunctionUrl } from '../../../examples/lambda/test/function-url-emulator.js';
import { requiredEnv } from '../durable-process.js';
import { sqsSdk } from './sdk.js';

const every = Number(process.env.REFUSE_SENDS_EVERY ?? 0);
const client = new sqsSdk.SQSClient({ useQueueUrlAsEndpoint: false });
let sends = 0;
const sqs = {
  send: (command: { constructor: { name: string } }): Promise<unknown> => {
    const refuse =
      command.constructor.name === 'SendMessageCommand' && every > 0 && ++sends % every === 0;
    return refuse ? Promise.reject(new Error('SQS refused (test)')) : client.send(command as never);
  },
};

const receiver = createReceiver({
  secret: requiredEnv('SECRET'),
  queue: createSqsQueue({
    queueUrl: requiredEnv('QUEUE_URL'),
    dedupeTable: requiredEnv('DEDUPE_TABLE'),
    failedTable: requiredEnv('FAILED_TABLE'),
    sqs,
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
