/**
 * One "function instance" of the demo: this example's queue-mode handler (../queue-handler.ts),
 * invoked as Lambda would invoke it, by a function URL (ROLE=producer: a node:http stand-in on
 * 127.0.0.1 that turns each request into the event AWS sends) or by the queue's event source
 * mapping (ROLE=consumer: a local stand-in that long-polls the queue and invokes the handler with
 * SQS events). The SDK reaches the emulators through AWS_ENDPOINT_URL_SQS/_DYNAMODB.
 *
 * The consumer adds a second handler that stands for the real work (a CRM call of WORK_MS) and
 * prints `working <id>`, then `handled <id>` once done: the demo counts those lines.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { sqsSdk } from '../../../../test/support/aws/sdk.js';
import { startEventSourceMapping } from '../../../../test/support/aws/event-source-mapping.js';
import { startFunctionUrl } from '../../test/function-url-emulator.js';
import { handler, receiver } from '../queue-handler.js';

if (process.env.ROLE === 'producer') {
  const functionUrl = await startFunctionUrl(handler);
  console.log(`function URL ${functionUrl.url}`);
} else {
  const workMs = Number(process.env.WORK_MS ?? 500);
  receiver.on(
    'churn_risk_alert',
    async (_alert, context) => {
      console.log(`working ${context.id}`);
      await sleep(workMs);
      console.log(`handled ${context.id}`);
    },
    { id: 'crm-call' },
  );
  startEventSourceMapping({
    sqs: new sqsSdk.SQSClient({ useQueueUrlAsEndpoint: false }),
    queueUrl: process.env.CHURN_RISK_QUEUE_URL ?? '',
    queueArn: process.env.CHURN_RISK_QUEUE_ARN ?? '',
    handler,
  });
  console.log('event source mapping polling');
}
