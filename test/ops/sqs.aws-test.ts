import { createLambdaHandler, createSqsQueue } from '@churn-risk/lambda';
import { afterAll, beforeAll } from 'vitest';
import { opsApiSuite } from '../../packages/ops/test/api-suite.js';
import { failingReceiver, until } from '../../packages/ops/test/fixture.js';
import { startAwsEmulators, type AwsEmulators } from '../support/aws/emulators.js';
import { startEventSourceMapping } from '../support/aws/event-source-mapping.js';

// The operations API over queue mode on AWS: SQS (fauxqs) and the failed table in DynamoDB
// (dynalite), consumed by the local event source mapping. Run by ops-sqs.test.ts in a child
// process with packages/lambda/vitest.config.ts (the AWS SDK's conditions).

let aws: AwsEmulators | undefined;
let places = 0;

beforeAll(async () => {
  aws = await startAwsEmulators();
});

afterAll(async () => {
  await aws?.stop();
});

opsApiSuite('SQS and DynamoDB', async () => {
  if (aws === undefined) throw new Error('the emulators have not started');
  const name = `ops-${String(++places)}`;
  const where = { ...(await aws.createQueue(name, 5)), ...(await aws.createTables(name)) };
  const queue = createSqsQueue({
    queueUrl: where.queueUrl,
    dedupeTable: where.dedupeTable,
    failedTable: where.failedTable,
    sqs: aws.sqs,
    dynamodb: aws.dynamodb,
  });
  const fixture = failingReceiver(queue);
  const handler = createLambdaHandler(fixture.receiver);
  const mapping = startEventSourceMapping({
    sqs: aws.sqs,
    queueUrl: where.queueUrl,
    queueArn: where.queueArn,
    handler: (event) => handler(event),
    waitTimeSeconds: 1,
  });
  return {
    queue,
    fixture,
    settle: (done) => until(done, 30_000),
    close: async () => {
      await mapping.stop();
      await fixture.receiver.close({ timeoutMs: 10_000 });
    },
  };
});
