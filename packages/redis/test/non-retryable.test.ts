import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ChurnRiskClient,
  createReceiver,
  NonRetryableError,
  ServiceError,
  type Receiver,
  type RetryOptions,
} from '@churn-risk/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisQueue, type RedisQueue } from '../src/index.js';
import { deliveryOf, makeAlert, SECRET, useRedisServer } from './helpers.js';

// SPEC 18 on a real Redis: an error that must not be retried ends the alert's tries at once (core's
// one try protocol, with the Redis store): the handler runs once, the alert is in the failed set
// after one try, no retry is scheduled, and onError runs once with the error.

const redis = useRedisServer();
const { open } = redis;
let prefixSeq = 0;

/** A retry would wait ten minutes: an alert in the failed set was never scheduled for one. */
const SLOW_RETRIES: RetryOptions = { retries: 3, backoffMs: () => 600_000 };

function setUp(retries: RetryOptions): { receiver: Receiver; queue: RedisQueue } {
  const prefix = `nr${String(process.pid)}-${String(++prefixSeq)}`;
  const queue = createRedisQueue({ connection: redis.url, prefix, lockDurationMs: 5000 });
  const receiver = createReceiver({ secret: SECRET, queue, retries });
  open.queues.push(queue);
  open.receivers.push(receiver);
  return { receiver, queue };
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Delivers one alert and waits until it is in the failed set. */
async function deliverUntilFailed(receiver: Receiver, queue: RedisQueue): Promise<void> {
  expect((await receiver.handle(deliveryOf(makeAlert()))).status).toBe(202);
  await until(async () => (await queue.counts()).failed === 1, 'the alert to fail');
}

/** A local HTTP service that answers every request `404 NOT_FOUND`, as for an unknown user. */
let service: Server;
let serviceUrl = '';
beforeAll(async () => {
  service = createServer((_req, res) => {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'NOT_FOUND', message: 'No such user.' } }));
  });
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  serviceUrl = `http://127.0.0.1:${String((service.address() as AddressInfo).port)}`;
});
afterAll(async () => {
  service.closeAllConnections();
  await new Promise((resolve) => service.close(resolve));
});

describe('errors that must not be retried (real Redis)', () => {
  it('a NonRetryableError: one run, failed after one try, no retry scheduled, onError once', async () => {
    const { receiver, queue } = setUp(SLOW_RETRIES);
    let runs = 0;
    const thrown = new NonRetryableError('No CRM account', { cause: new Error('404') });
    const reported: unknown[] = [];
    receiver.on('churn_risk_alert', () => {
      runs += 1;
      throw thrown;
    });
    receiver.onError((error) => void reported.push(error));
    await deliverUntilFailed(receiver, queue);
    await receiver.drain({ timeoutMs: 10_000 });
    expect(runs).toBe(1);
    expect(reported).toEqual([thrown]);
    expect(await queue.counts()).toMatchObject({ failed: 1, delayed: 0, waiting: 0, active: 0 });
    const [failed] = await queue.failed();
    expect(failed?.tries).toBe(1);
    expect(failed?.error).toMatch(/NonRetryableError: No CRM account/);
  });

  it("the client's NOT_FOUND (retryable false) from getRiskScore is not retried by default", async () => {
    const { receiver, queue } = setUp(SLOW_RETRIES);
    const client = new ChurnRiskClient({ apiKey: 'sk_test_redis_nr', baseUrl: serviceUrl });
    let runs = 0;
    const reported: unknown[] = [];
    receiver.on('churn_risk_alert', async (alert) => {
      runs += 1;
      await client.getRiskScore(alert.userId);
    });
    receiver.onError((error) => void reported.push(error));
    await deliverUntilFailed(receiver, queue);
    await receiver.drain({ timeoutMs: 10_000 });
    expect(runs).toBe(1);
    expect(reported).toHaveLength(1);
    expect(reported[0]).toBeInstanceOf(ServiceError);
    expect(reported[0]).toMatchObject({ code: 'NOT_FOUND', retryable: false });
    expect((await queue.failed())[0]?.tries).toBe(1);
  });

  it('shouldRetry is asked with the attempt number; its false fails the alert, its true retries', async () => {
    const asked: number[] = [];
    const { receiver, queue } = setUp({
      retries: 3,
      backoffMs: () => 10,
      shouldRetry: (_error, attempt) => {
        asked.push(attempt);
        return attempt < 1;
      },
    });
    const attempts: number[] = [];
    const reported: unknown[] = [];
    receiver.on('churn_risk_alert', (_alert, context) => {
      attempts.push(context.attempt);
      throw new Error(`CRM down (${String(context.attempt)})`);
    });
    receiver.onError((error) => void reported.push(error));
    await deliverUntilFailed(receiver, queue);
    await receiver.drain({ timeoutMs: 10_000 });
    expect(attempts).toEqual([0, 1]);
    expect(asked).toEqual([0, 1]);
    expect(reported).toEqual([new Error('CRM down (1)')]);
    expect((await queue.failed())[0]?.tries).toBe(2);
  });
});
