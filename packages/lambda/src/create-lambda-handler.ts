import type { Receiver, ReceiverResult } from '@churn-risk/core';
import { eventBody, eventRequest } from './event-request.js';
import type {
  LambdaHandler,
  LambdaHttpEvent,
  LambdaHttpResult,
  LambdaResult,
} from './lambda-events.js';
import { lambdaResult } from './lambda-result.js';
import { isSqsEvent, type SqsEvent } from './sqs/sqs-events.js';
import type { SqsQueue } from './sqs/sqs-queue.js';
import { sqsDispatch } from './sqs/sqs-dispatch.js';

/** Options of `createLambdaHandler`. */
export interface LambdaHandlerOptions {
  /**
   * The queue whose SQS events this handler consumes. Needed only when two receivers of one
   * process use the same SQS queue; otherwise an SQS event goes to the receiver's `createSqsQueue`
   * queue whose URL matches the event's `eventSourceARN`.
   */
  queue?: SqsQueue | undefined;
}

async function answer(receiver: Receiver, event: LambdaHttpEvent): Promise<LambdaHttpResult> {
  const { shape, method, headers } = eventRequest(event);
  let result: ReceiverResult;
  try {
    // Other methods get 405 from the receiver without the body being looked at.
    const body = method.toUpperCase() === 'POST' ? eventBody(event, receiver.maxBodyBytes) : null;
    result = await receiver.handle({ method, headers, body });
  } catch (error) {
    result = receiver.reject(error); // 413 before decoding: logged and reported like any refusal
  }
  // Lambda freezes the environment once the handler returns: finish the alert first (its
  // handlers ran, or a durable queue holds it).
  await result.done;
  return lambdaResult(shape, result);
}

/**
 * An AWS Lambda handler that hands churn-risk webhook deliveries to `receiver`: API Gateway REST
 * (payload 1.0) and HTTP API (2.0) proxy events, function URL events and Application Load Balancer
 * events (also with multi-value headers). Base64 bodies are decoded as bytes; headers are read from
 * every field the event has. Each event gets the result shape its source expects.
 *
 * Lambda freezes the execution environment as soon as the handler returns, so the returned promise
 * settles only once the receiver is done with the alert: its handlers ran (in the default in-memory
 * mode, then the answer is `202` after the processing, or `500 HANDLER_FAILED` in `mode: 'sync'`
 * when a handler failed), or a durable queue such as `@churn-risk/redis` holds it. It rejects with
 * a `TypeError` (nothing accepted) for an event that is not one of these HTTP events.
 *
 * In queue mode (`createReceiver({ queue: createSqsQueue(...) })`) it also takes the SQS events
 * of the queue's event source mapping, told apart by their shape: each record runs through
 * core's try protocol, and the answer is the partial batch response (`batchItemFailures`).
 *
 * @example
 * const receiver = createReceiver({ secret: process.env.CHURN_RISK_WEBHOOK_SECRET! });
 * receiver.on('churn_risk_alert', async (alert) => notifyTeam(alert));
 * export const handler = createLambdaHandler(receiver);
 */
export function createLambdaHandler(
  receiver: Receiver,
  options: LambdaHandlerOptions = {},
): LambdaHandler {
  if (receiver.consume === 'invocation') {
    throw new TypeError(
      "consume: 'invocation' cannot work on Lambda: the environment freezes once the handler " +
        'returns, so the answer would wait for the sweep. Use consume: false and a scheduled ' +
        'createSweepHandler(receiver) (EventBridge Scheduler), or createSqsQueue.',
    );
  }
  const handler = async (event: LambdaHttpEvent | SqsEvent): Promise<LambdaResult> => {
    if (!isSqsEvent(event)) return answer(receiver, event);
    const consumer = options.queue ?? sqsDispatch.find?.(event);
    if (consumer === undefined) throw new TypeError('An SQS event, and no createSqsQueue queue.');
    return consumer.handleSqsEvent(event);
  };
  return handler as LambdaHandler;
}
