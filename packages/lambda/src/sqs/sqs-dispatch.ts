import type { SqsBatchResponse, SqsEvent } from './sqs-events.js';

/** How `createLambdaHandler` finds the consumer of an SQS event: set once a queue is attached. */
export const sqsDispatch: {
  find?: (event: SqsEvent) => { handleSqsEvent(event: SqsEvent): Promise<SqsBatchResponse> };
} = {};
