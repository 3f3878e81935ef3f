import { createQueueReceiver } from '@churn-risk/core';
import { createLambdaHandler, createSqsQueue } from '@churn-risk/lambda';
import { logAlert } from './log-alert.js';

/** A variable the function cannot run without (template.yaml sets them all). */
function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`Set ${name} (see template.yaml).`);
  return value;
}

/**
 * Queue mode: an alert's identity is claimed in DynamoDB and the alert sent to SQS before the
 * `202`; the queue's event source mapping invokes this same function with SQS events, and core's
 * try protocol runs each one (retries as new messages, failures in the failed table).
 */
export const queue = createSqsQueue({
  queueUrl: required('CHURN_RISK_QUEUE_URL'),
  dedupeTable: required('CHURN_RISK_DEDUPE_TABLE'),
  failedTable: required('CHURN_RISK_FAILED_TABLE'),
});

/** Built once per execution environment (at cold start) and reused by every invocation. */
export const receiver = createQueueReceiver({
  secret: required('CHURN_RISK_WEBHOOK_SECRET'),
  queue,
});
receiver.on('churn_risk_alert', logAlert, { id: 'log-alert' });

/** The function's handler (`queue-handler.handler`): function URL events and SQS events. */
export const handler = createLambdaHandler(receiver);
