import { createReceiver } from '@churn-risk/core';
import { createLambdaHandler } from '@churn-risk/lambda';
import { logAlert } from './log-alert.js';

const secret = process.env.CHURN_RISK_WEBHOOK_SECRET;
if (secret === undefined || secret === '') {
  throw new Error('Set CHURN_RISK_WEBHOOK_SECRET to the webhook signing secret.');
}

/** Built once per execution environment (at cold start) and reused by every invocation. */
export const receiver = createReceiver({ secret });
receiver.on('churn_risk_alert', logAlert);

/**
 * The function's handler (`handler.handler`): function URL, API Gateway or ALB events. Its promise
 * settles once the alert's handlers have run, because Lambda freezes the environment after that.
 */
export const handler = createLambdaHandler(receiver);
