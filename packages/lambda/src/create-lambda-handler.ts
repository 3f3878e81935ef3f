import type { Receiver } from '@churn-risk/core';
import type { ReceiverResult } from '@churn-risk/core/adapter';
import type { AlertQueue } from '@churn-risk/core/store';
import { eventBody, eventRequest } from './event-request.js';
import type {
  LambdaHandler,
  LambdaHttpEvent,
  LambdaHttpResult,
  LambdaResult,
} from './lambda-events.js';
import { lambdaResult } from './lambda-result.js';
import { isSqsEvent, type SqsBatchResponse, type SqsEvent } from './sqs/sqs-events.js';
import type { SqsQueue } from './sqs/sqs-queue.js';

/**
 * Hands an SQS event to the receiver's own queue, never to another receiver's. A `createSqsQueue`
 * queue is told by its consumer method rather than by its class, so that a bundle without queue
 * mode holds none of its code.
 */
function consume(receiver: Receiver, event: SqsEvent): Promise<SqsBatchResponse> {
  const queue: Partial<SqsQueue> & AlertQueue = receiver.queue;
  if (queue.handleSqsEvent === undefined) {
    throw new TypeError(
      `An SQS event, and the receiver's queue is the ${queue.kind} queue, not createSqsQueue.`,
    );
  }
  return queue.handleSqsEvent(event);
}

async function answer(receiver: Receiver, event: LambdaHttpEvent): Promise<LambdaHttpResult> {
  const { shape, method, headers } = eventRequest(event);
  let result: ReceiverResult;
  try {
    // Other methods get 405 from the receiver without the body being looked at.
    const body = method.toUpperCase() === 'POST' ? eventBody(event, receiver.maxBodyBytes) : null;
    result = await receiver.handle({ method, headers, body });
  } catch (error) {
    result = receiver.refuse(error); // 413 before decoding: logged and reported like any refusal
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
 * of the queue's event source mapping, told apart by their shape, and consumes them with that
 * receiver's own queue (so two receivers of one queue in one process each consume with theirs):
 * each record runs through core's try protocol, and the answer is the partial batch response
 * (`batchItemFailures`). An SQS event rejects with a `TypeError` when the receiver's queue is not
 * a `createSqsQueue` queue, or is not the queue the event's records came from.
 *
 * @example
 * const receiver = createReceiver({ secret: process.env.CHURN_RISK_WEBHOOK_SECRET! });
 * receiver.on('churn_risk_alert', async (alert) => notifyTeam(alert));
 * export const handler = createLambdaHandler(receiver);
 */
export function createLambdaHandler(receiver: Receiver): LambdaHandler {
  if (receiver.consume === 'invocation') {
    throw new TypeError(
      "consume: 'invocation' cannot work on Lambda, which freezes once the handler returns: use " +
        'consume: false and a scheduled createSweepHandler(receiver), or createSqsQueue.',
    );
  }
  const handler = async (event: LambdaHttpEvent | SqsEvent): Promise<LambdaResult> => {
    return isSqsEvent(event) ? consume(receiver, event) : answer(receiver, event);
  };
  return handler as LambdaHandler;
}
