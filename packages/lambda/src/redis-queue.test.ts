import type { ChurnRiskAlert, Receiver } from '@churn-risk/core';
import { createRedisQueue, type RedisQueue } from '@churn-risk/redis';
import { startRedisServer, type RedisServer } from '@churn-risk/redis/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  conformanceReceiver,
  makeAlert,
  signedHeaders,
} from '../../../test/conformance/fixtures.js';
import { functionUrlEvent, restApiEvent } from './aws-events.test-util.js';
import { createLambdaHandler } from './index.js';

// With a durable queue the Lambda answers once Redis holds the alert; worker processes
// (here: a second receiver on the same Redis) run the handlers later.

let redis: RedisServer;
let sequence = 0;
const receivers: Receiver[] = [];

beforeAll(async () => {
  redis = await startRedisServer();
});

afterAll(async () => {
  await redis.stop(); // SIGCONT first, so a paused server stops too
  redis.cleanup();
});

afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close({ timeoutMs: 10_000 })));
});

/** A queue under a fresh prefix; `prefix` reuses another's (a worker sharing the Redis). */
function queueFor(
  prefix = `lambda-${process.pid}-${++sequence}`,
  enqueueTimeoutMs = 2000,
): RedisQueue {
  return createRedisQueue({
    connection: redis.url,
    prefix,
    enqueueTimeoutMs,
    leaseMs: 5000,
  });
}

/** A web receiver (accepts only) with a handler registered that must not run in this process. */
function webReceiver(queue: RedisQueue): { receiver: Receiver; ranHere: string[] } {
  const receiver = conformanceReceiver({ queue, consume: false });
  receivers.push(receiver);
  const ranHere: string[] = [];
  receiver.on('churn_risk_alert', (alert) => {
    ranHere.push(alert.userId);
  });
  return { receiver, ranHere };
}

function delivery(alert: Record<string, unknown>): {
  headers: Record<string, string>;
  body: string;
} {
  const body = JSON.stringify(alert);
  return { headers: signedHeaders(body), body };
}

describe('createLambdaHandler with a Redis queue', () => {
  it('settles with 202 once Redis holds the alert; a worker handles it later', async () => {
    const prefix = `lambda-${process.pid}-${++sequence}`;
    const queue = queueFor(prefix);
    const { receiver, ranHere } = webReceiver(queue);
    const handler = createLambdaHandler(receiver);
    const alert = makeAlert();

    const result = await handler(functionUrlEvent(delivery(alert)));
    expect(result.statusCode, result.body).toBe(202);
    expect(JSON.parse(result.body)).toEqual({ received: true });
    // When the invocation settled, the job was in Redis and nothing had run here.
    expect(await queue.counts()).toMatchObject({ waiting: 1, active: 0, completed: 0 });
    expect(ranHere).toEqual([]);

    // A redelivery (another Lambda instance shares the Redis) is a duplicate.
    const again = await createLambdaHandler(webReceiver(queueFor(prefix)).receiver)(
      restApiEvent(delivery(alert)),
    );
    expect(JSON.parse(again.body)).toEqual({ received: true, duplicate: true });

    // A worker process on the same Redis runs the handler.
    const handled: ChurnRiskAlert[] = [];
    const worker = conformanceReceiver({ queue: queueFor(prefix) });
    receivers.push(worker);
    worker.on('churn_risk_alert', (received) => {
      handled.push(received);
    });
    await expect.poll(() => handled.length, { timeout: 20_000 }).toBe(1);
    expect(handled[0]).toEqual(alert);
    expect(ranHere).toEqual([]);
  });

  it('does not settle while Redis does not answer, and settles 202 once it holds the alert', async () => {
    const queue = queueFor(undefined, 30_000);
    const { receiver } = webReceiver(queue);
    const handler = createLambdaHandler(receiver);
    expect((await receiver.health()).ok).toBe(true); // connected before the pause
    redis.signal('SIGSTOP');
    let settled = false;
    let invocation: ReturnType<typeof handler> | undefined;
    try {
      invocation = handler(functionUrlEvent(delivery(makeAlert())));
      void invocation.then(() => (settled = true));
      for (let turn = 0; turn < 20; turn += 1)
        await new Promise((resolve) => setImmediate(resolve));
      expect(settled).toBe(false);
    } finally {
      redis.signal('SIGCONT');
    }
    const result = await invocation;
    expect(result?.statusCode).toBe(202);
    expect(await queue.counts()).toMatchObject({ waiting: 1 });
  });

  it('answers 503 OVERLOADED with Retry-After when Redis cannot record the alert', async () => {
    const queue = createRedisQueue({
      connection: 'redis://127.0.0.1:1', // nothing listens there
      prefix: `lambda-${process.pid}-unreachable`,
      enqueueTimeoutMs: 500,
    });
    const { receiver, ranHere } = webReceiver(queue);
    const result = await createLambdaHandler(receiver)(functionUrlEvent(delivery(makeAlert())));
    expect(result.statusCode).toBe(503);
    expect(result.headers['retry-after']).toMatch(/^\d+$/);
    expect(JSON.parse(result.body)).toMatchObject({ error: { code: 'OVERLOADED' } });
    expect(ranHere).toEqual([]);
  });
});
