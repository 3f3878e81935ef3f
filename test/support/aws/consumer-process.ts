/**
 * A consumer "function" for queue mode's process tests: a receiver on `createSqsQueue` (the SDK's
 * default clients, which reach the emulators through AWS_ENDPOINT_URL_SQS and
 * AWS_ENDPOINT_URL_DYNAMODB) and the local event source mapping invoking its Lambda handler.
 *
 * Env: SECRET, QUEUE_URL, QUEUE_ARN, DEDUPE_TABLE, FAILED_TABLE, LOG_FILE, MAX_STALLS, WORK_MS
 * (time a handler takes), HOLD_MS (time it takes instead for a user id starting with `hold_`),
 * BATCH_SIZE, POLLERS (mappings polling at once, as Lambda scales a mapping out; default 1). Each handler run appends `start <id> <pid>` and, once finished, `done <id> <pid>` to
 * LOG_FILE, synchronously (a SIGKILL loses no line); each `onError` appends `error <id> <pid>
 * <error name>`. A handler of a user id starting with `kill_` SIGKILLs its own process after its
 * `start` line (a payload that crashes every consumer). Prints `consumer ready`; SIGTERM stops the
 * mapping once its batch is done and exits 0.
 */
import { createReceiver } from '@churn-risk/core';
import { createLambdaHandler, createSqsQueue } from '@churn-risk/lambda';
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { requiredEnv } from '../durable-process.js';
import { sqsSdk } from './sdk.js';
import { startEventSourceMapping } from './event-source-mapping.js';

const logFile = requiredEnv('LOG_FILE');
const workMs = Number(process.env.WORK_MS ?? 0);
const holdMs = Number(process.env.HOLD_MS ?? workMs);
const queue = createSqsQueue({
  queueUrl: requiredEnv('QUEUE_URL'),
  dedupeTable: requiredEnv('DEDUPE_TABLE'),
  failedTable: requiredEnv('FAILED_TABLE'),
  maxStalls: Number(process.env.MAX_STALLS ?? 3),
});
const receiver = createReceiver({
  secret: requiredEnv('SECRET'),
  queue,
  retries: { retries: 3, backoffMs: () => 100 },
});
receiver.on('churn_risk_alert', async (alert, context) => {
  appendFileSync(logFile, `start ${context.id} ${process.pid}\n`);
  if (alert.userId.startsWith('kill_')) process.kill(process.pid, 'SIGKILL');
  const ms = alert.userId.startsWith('hold_') ? holdMs : workMs;
  if (ms > 0) await sleep(ms);
  appendFileSync(logFile, `done ${context.id} ${process.pid}\n`);
});
receiver.onError((error, _alert, context) => {
  const name = error instanceof Error ? error.name : 'unknown';
  appendFileSync(logFile, `error ${context.id} ${process.pid} ${name}\n`);
});

const sqs = new sqsSdk.SQSClient({ useQueueUrlAsEndpoint: false });
const handler = createLambdaHandler(receiver);
const mappings = Array.from({ length: Number(process.env.POLLERS ?? 1) }, () =>
  startEventSourceMapping({
    sqs,
    queueUrl: requiredEnv('QUEUE_URL'),
    queueArn: requiredEnv('QUEUE_ARN'),
    handler,
    batchSize: Number(process.env.BATCH_SIZE ?? 10),
  }),
);
console.log('consumer ready');
process.once('SIGTERM', () => {
  void Promise.all(mappings.map((mapping) => mapping.stop()))
    .then(() => receiver.close({ timeoutMs: 30_000 }))
    .finally(() => process.exit(0));
});
