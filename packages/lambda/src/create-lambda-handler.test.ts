import {
  createQueueReceiver,
  createReceiver,
  type ChurnRiskAlert,
  type Receiver,
  type ReceiverOptions,
} from '@churn-risk/core';
import { createDurableQueue, createMemoryStore } from '@churn-risk/core/store';
import { createTestDelivery, signPayload } from '@churn-risk/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  NOW_S,
  SECRET,
  conformanceReceiver,
  gate,
  makeAlert,
  signedHeaders,
} from '../../../test/conformance/fixtures.js';
import {
  EVENT_SOURCES,
  albEvent,
  eventFor,
  functionUrlEvent,
  httpApiEvent,
  restApiEvent,
  type EventInput,
} from './aws-events.test-util.js';
import {
  expectSecretError,
  LAMBDA_HINT,
  UNSET_SECRETS,
} from '../../../test/support/secret-hint.js';
import {
  createLambdaHandler,
  createSqsQueue,
  type LambdaHttpEvent,
  type LambdaHttpResult,
  type SqsEvent,
} from './index.js';

const receivers: Receiver[] = [];

afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close({ timeoutMs: 5000 })));
});

function receiverWith(options: Partial<ReceiverOptions> = {}): Receiver {
  const receiver = conformanceReceiver(options);
  receivers.push(receiver);
  return receiver;
}

/** A signed delivery of `alert` as the service sends it. */
function delivery(alert: unknown = makeAlert()): EventInput {
  const body = JSON.stringify(alert);
  return { headers: signedHeaders(body), body };
}

/** The answer in one form, whatever the result shape. */
interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function answerOf(result: LambdaHttpResult): Answer {
  if ('multiValueHeaders' in result && result.multiValueHeaders !== undefined) {
    const headers: Record<string, string> = {};
    for (const [name, values] of Object.entries(result.multiValueHeaders)) {
      headers[name] = values.join(', ');
    }
    return { status: result.statusCode, headers, body: result.body };
  }
  return { status: result.statusCode, headers: result.headers ?? {}, body: result.body };
}

function errorCode(answer: Answer): string {
  return (JSON.parse(answer.body) as { error: { code: string } }).error.code;
}

/** Calls `handler` and records, in `events`, when its promise settled. */
async function invoke(
  receiver: Receiver,
  event: LambdaHttpEvent,
  events: string[] = [],
): Promise<Answer> {
  const result = await createLambdaHandler(receiver)(event);
  const answer = answerOf(result);
  events.push(`answered ${answer.status}`);
  return answer;
}

describe('createLambdaHandler: the event shapes', () => {
  it('answers an API Gateway REST event with statusCode, headers, body and isBase64Encoded', async () => {
    const receiver = receiverWith();
    const result = await createLambdaHandler(receiver)(restApiEvent(delivery()));
    expect(result).toEqual({
      statusCode: 202,
      headers: { 'content-type': 'application/json' },
      body: '{"received":true}',
      isBase64Encoded: false,
    });
  });

  it.each([
    ['an HTTP API (payload 2.0) event', httpApiEvent],
    ['a function URL event', functionUrlEvent],
  ])('answers %s with statusCode, headers and body', async (_label, build) => {
    const receiver = receiverWith();
    const result = await createLambdaHandler(receiver)(build(delivery()));
    expect(result).toEqual({
      statusCode: 202,
      headers: { 'content-type': 'application/json' },
      body: '{"received":true}',
    });
  });

  it('answers an ALB event with statusDescription and headers', async () => {
    const receiver = receiverWith();
    const result = await createLambdaHandler(receiver)(albEvent(delivery()));
    expect(result).toEqual({
      statusCode: 202,
      statusDescription: '202 Accepted',
      headers: { 'content-type': 'application/json' },
      body: '{"received":true}',
      isBase64Encoded: false,
    });
  });

  it('answers an ALB event with multi-value headers in multiValueHeaders only', async () => {
    const receiver = receiverWith();
    const handler = createLambdaHandler(receiver);
    expect(await handler(albEvent(delivery(), true))).toEqual({
      statusCode: 202,
      statusDescription: '202 Accepted',
      multiValueHeaders: { 'content-type': ['application/json'] },
      body: '{"received":true}',
      isBase64Encoded: false,
    });
    const refused = await handler(albEvent({ method: 'GET', headers: {} }, true));
    expect(refused).toMatchObject({
      statusCode: 405,
      statusDescription: '405 Method Not Allowed',
      multiValueHeaders: { allow: ['POST'], 'content-type': ['application/json'] },
    });
    expect(refused).not.toHaveProperty('headers');
  });

  it.each(EVENT_SOURCES)('hands the alert of a %s event to the handler', async (source) => {
    const receiver = receiverWith();
    const seen: unknown[] = [];
    receiver.on('churn_risk_alert', (alert) => {
      seen.push(alert);
    });
    const alert = makeAlert();
    const answer = await invoke(receiver, eventFor(source, delivery(alert)));
    expect(answer.status).toBe(202);
    expect(seen).toEqual([alert]); // already handled when the promise settled
  });

  it('rejects an event that is not an HTTP event, accepting nothing', async () => {
    const receiver = receiverWith();
    const handler = createLambdaHandler(receiver) as (event: unknown) => Promise<unknown>;
    await expect(handler({ Records: [{ body: '{}' }] })).rejects.toThrow(TypeError);
    await expect(handler(null)).rejects.toThrow(TypeError);
    expect(receiver.stats.accepted).toBe(0);
  });
});

describe('createLambdaHandler: headers of every event shape', () => {
  /** Two signatures: the right one first, a well-formed wrong one last. */
  function twoSignatures(body: string): Record<string, string | string[]> {
    const headers = signedHeaders(body);
    const wrong = signPayload({ body, secret: 'whsec_other', timestamp: NOW_S }).signature;
    return { ...headers, 'x-service-signature': [headers['x-service-signature'] ?? '', wrong] };
  }

  // A plain ALB target group passes only the last value of a repeated header (AWS behaviour):
  // the README says to turn multi-value headers on.
  it.each(EVENT_SOURCES.filter((source) => source !== 'alb'))(
    'reads every value of a repeated header in a %s event, not only the last',
    async (source) => {
      const receiver = receiverWith();
      const body = JSON.stringify(makeAlert());
      // REST events also carry `headers` with only the last (wrong) value: it must not win.
      const answer = await invoke(
        receiver,
        eventFor(source, { headers: twoSignatures(body), body }),
      );
      expect(answer.status, answer.body).toBe(202);
    },
  );

  it('matches header names case-insensitively (REST events keep the sender’s case)', async () => {
    const receiver = receiverWith();
    const event = restApiEvent(delivery());
    expect(Object.keys(event.headers ?? {})).toContain('X-Service-Signature');
    expect((await invoke(receiver, event)).status).toBe(202);
  });

  it('reads a REST event whose headers field is null (multiValueHeaders only)', async () => {
    const receiver = receiverWith();
    const event = { ...restApiEvent(delivery()), headers: null };
    expect((await invoke(receiver, event)).status).toBe(202);
  });

  it('reads a REST event whose multiValueHeaders field is null (headers only)', async () => {
    const receiver = receiverWith();
    const event = { ...restApiEvent(delivery()), multiValueHeaders: null };
    expect((await invoke(receiver, event)).status).toBe(202);
  });

  it('answers 401 MISSING_SIGNATURE for an event without headers at all', async () => {
    const receiver = receiverWith();
    const body = JSON.stringify(makeAlert());
    const event = { ...httpApiEvent({ headers: {}, body }), headers: undefined };
    const answer = await invoke(receiver, event);
    expect(answer.status).toBe(401);
    expect(errorCode(answer)).toBe('MISSING_SIGNATURE');
  });
});

describe('createLambdaHandler: base64 bodies', () => {
  const recommendation = 'Appelez-les avant la prochaine facture, café offert ☕ 🚀';

  it('decodes as bytes, so a non-ASCII payload verifies (atob() would not)', async () => {
    const alert = makeAlert({ recommendation });
    const body = JSON.stringify(alert);
    const base64 = Buffer.from(body, 'utf8').toString('base64');
    // What an atob()-to-string conversion would verify: Latin-1 characters, not the signed bytes.
    expect(atob(base64)).not.toBe(body);
    for (const source of EVENT_SOURCES) {
      const receiver = receiverWith();
      const seen: ChurnRiskAlert[] = [];
      receiver.on('churn_risk_alert', (received) => {
        seen.push(received);
      });
      const event = eventFor(source, { headers: signedHeaders(body), body, base64: true });
      expect(event.isBase64Encoded).toBe(true);
      expect(event.body).toBe(base64);
      const answer = await invoke(receiver, event);
      expect(answer.status, `${source}: ${answer.body}`).toBe(202);
      expect(seen.map((received) => received.recommendation)).toEqual([recommendation]);
    }
  });

  it('verifies the bytes exactly: a base64 body that decodes to other bytes is refused', async () => {
    const receiver = receiverWith();
    const body = JSON.stringify(makeAlert({ recommendation }));
    // The same text encoded as Latin-1 where possible: other bytes than the ones signed.
    const latin1 = Buffer.from(body, 'latin1');
    const event = httpApiEvent({ headers: signedHeaders(body), body: latin1 });
    const answer = await invoke(receiver, event);
    expect(answer.status).toBe(401);
    expect(errorCode(answer)).toBe('INVALID_SIGNATURE');
  });

  it('takes a text body as its UTF-8 bytes', async () => {
    const receiver = receiverWith();
    const body = JSON.stringify(makeAlert({ recommendation }));
    const answer = await invoke(receiver, functionUrlEvent({ headers: signedHeaders(body), body }));
    expect(answer.status).toBe(202);
  });
});

describe('createLambdaHandler: the promise settles once the receiver is done with the alert', () => {
  it('waits for a slow handler before answering 202 (async mode)', async () => {
    const receiver = receiverWith();
    const hold = gate();
    const started = gate();
    const events: string[] = [];
    receiver.on('churn_risk_alert', async () => {
      events.push('handler started');
      started.open();
      await hold.promise;
      events.push('handler finished');
    });
    const answered = invoke(receiver, functionUrlEvent(delivery()), events);
    await started.promise;
    // Let every pending callback and I/O turn run: the invocation must still be open.
    for (let turn = 0; turn < 10; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual(['handler started']);
    hold.open();
    expect((await answered).status).toBe(202);
    expect(events).toEqual(['handler started', 'handler finished', 'answered 202']);
    expect(receiver.stats).toMatchObject({ queued: 0, running: 0 });
  });

  it('waits for a failed handler’s retries and onError; async mode still answers 202', async () => {
    const receiver = receiverWith({ retries: { retries: 2, backoffMs: () => 5 } });
    const events: string[] = [];
    receiver.on('churn_risk_alert', (_alert, context) => {
      events.push(`try ${context.attempt}`);
      throw new Error('CRM down');
    });
    receiver.onError(() => {
      events.push('onError');
    });
    const answer = await invoke(receiver, httpApiEvent(delivery()), events);
    expect(events).toEqual(['try 0', 'try 1', 'try 2', 'onError', 'answered 202']);
    expect(answer.status).toBe(202);
  });

  it('in sync mode answers 500 HANDLER_FAILED after the handler failed, in every shape', async () => {
    for (const source of EVENT_SOURCES) {
      const receiver = receiverWith({ mode: 'sync' });
      receiver.on('churn_risk_alert', () => {
        throw new Error(`database down (${SECRET.length})`);
      });
      const answer = await invoke(receiver, eventFor(source, delivery()));
      expect(answer.status, source).toBe(500);
      expect(errorCode(answer)).toBe('HANDLER_FAILED');
      expect(answer.body).not.toContain('database down');
    }
  });

  it('in sync mode answers 202 after the handler succeeded', async () => {
    const receiver = receiverWith({ mode: 'sync' });
    const events: string[] = [];
    receiver.on('churn_risk_alert', async () => {
      await Promise.resolve();
      events.push('handled');
    });
    await invoke(receiver, albEvent(delivery()), events);
    expect(events).toEqual(['handled', 'answered 202']);
  });
});

describe.each(EVENT_SOURCES)(
  'createLambdaHandler: the status table through %s events',
  (source) => {
    const send = (receiver: Receiver, input: EventInput): Promise<Answer> =>
      invoke(receiver, eventFor(source, input));

    function expectError(answer: Answer, status: number, code: string): void {
      expect(answer.status, answer.body).toBe(status);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(errorCode(answer)).toBe(code);
      expect(answer.body).not.toContain(SECRET);
    }

    it('answers a redelivered alert 202 duplicate:true and runs the handler once', async () => {
      const receiver = receiverWith();
      let runs = 0;
      receiver.on('churn_risk_alert', () => {
        runs += 1;
      });
      const alert = makeAlert();
      expect(JSON.parse((await send(receiver, delivery(alert))).body)).toEqual({ received: true });
      const second = await send(receiver, delivery(alert));
      expect(second.status).toBe(202);
      expect(JSON.parse(second.body)).toEqual({ received: true, duplicate: true });
      expect(runs).toBe(1);
    });

    it('ignores a verified event it has no schema for with 202', async () => {
      const receiver = receiverWith();
      const answer = await send(receiver, delivery({ event: 'score_recomputed', userId: 'u1' }));
      expect(answer.status).toBe(202);
    });

    it('answers GET with 405 and Allow: POST, without looking at the body', async () => {
      const receiver = receiverWith({ maxBodyBytes: 16 });
      const answer = await send(receiver, { method: 'GET', headers: {}, body: 'x'.repeat(64) });
      expectError(answer, 405, 'METHOD_NOT_ALLOWED');
      expect(answer.headers.allow).toBe('POST');
    });

    it.each([false, true])(
      'answers a body over maxBodyBytes with 413 (base64: %s), reported to onRejected',
      async (base64) => {
        const receiver = receiverWith({ maxBodyBytes: 256 });
        const refused: string[] = [];
        receiver.onRejected(({ code }) => {
          refused.push(code);
        });
        const body = JSON.stringify(makeAlert({ padding: 'x'.repeat(2000) }));
        const answer = await send(receiver, { headers: signedHeaders(body), body, base64 });
        expectError(answer, 413, 'PAYLOAD_TOO_LARGE');
        expect(refused).toEqual(['PAYLOAD_TOO_LARGE']);
        const small = JSON.stringify(makeAlert());
        expect(small.length).toBeLessThanOrEqual(256);
        const ok = await send(receiver, { headers: signedHeaders(small), body: small, base64 });
        expect(ok.status).toBe(202);
      },
    );

    it('answers 413 by the decoded size: a base64 body of exactly maxBodyBytes bytes passes', async () => {
      const body = JSON.stringify(makeAlert());
      const receiver = receiverWith({ maxBodyBytes: Buffer.byteLength(body) });
      // Its base64 text is a third longer than the limit; its bytes are not.
      const answer = await send(receiver, { headers: signedHeaders(body), body, base64: true });
      expect(answer.status, answer.body).toBe(202);
    });

    it('answers the five 401 codes', async () => {
      const receiver = receiverWith();
      const body = JSON.stringify(makeAlert());
      const headers = signedHeaders(body);
      const without = (name: string): Record<string, string> =>
        Object.fromEntries(Object.entries(headers).filter(([key]) => key !== name));
      expectError(
        await send(receiver, { headers: without('x-service-signature'), body }),
        401,
        'MISSING_SIGNATURE',
      );
      expectError(
        await send(receiver, { headers: without('x-service-timestamp'), body }),
        401,
        'MISSING_TIMESTAMP',
      );
      expectError(
        await send(receiver, {
          headers: { ...headers, 'x-service-timestamp': `${NOW_S}.5` },
          body,
        }),
        401,
        'INVALID_TIMESTAMP',
      );
      const forged = await send(receiver, {
        headers: signedHeaders(body, { secret: 'not-the-secret' }),
        body,
      });
      expectError(forged, 401, 'INVALID_SIGNATURE');
      const expected = signPayload({ body, secret: SECRET, timestamp: NOW_S }).signature;
      expect(forged.body).not.toContain(expected.slice('sha256='.length));
      expectError(
        await send(receiver, { headers: signedHeaders(body, { timestamp: NOW_S - 301 }), body }),
        401,
        'TIMESTAMP_OUT_OF_TOLERANCE',
      );
    });

    it('answers 400 INVALID_PAYLOAD for a body that is not JSON and for an invalid alert', async () => {
      const receiver = receiverWith();
      const text = 'not json {';
      expectError(
        await send(receiver, { headers: signedHeaders(text), body: text }),
        400,
        'INVALID_PAYLOAD',
      );
      expectError(
        await send(receiver, delivery(makeAlert({ score: 1.5 }))),
        400,
        'INVALID_PAYLOAD',
      );
    });

    it('answers 503 OVERLOADED with Retry-After when the queue is full', async () => {
      const receiver = receiverWith({ concurrency: 1, maxQueue: 1 });
      const hold = gate();
      const started = gate();
      receiver.on('churn_risk_alert', async () => {
        started.open();
        await hold.promise;
      });
      const running = send(receiver, delivery());
      await started.promise;
      const waiting = send(receiver, delivery());
      await expect.poll(() => receiver.stats.queued).toBe(1);
      const rejected = await send(receiver, delivery());
      expectError(rejected, 503, 'OVERLOADED');
      expect(rejected.headers['retry-after']).toMatch(/^\d+$/);
      hold.open();
      expect((await running).status).toBe(202);
      expect((await waiting).status).toBe(202);
    });

    it('answers 503 CLOSED with Retry-After once the receiver is closed', async () => {
      const receiver = receiverWith();
      await receiver.close({ timeoutMs: 5000 });
      const answer = await send(receiver, delivery());
      expectError(answer, 503, 'CLOSED');
      expect(answer.headers['retry-after']).toMatch(/^\d+$/);
    });
  },
);

describe('createLambdaHandler: SQS events', () => {
  const sqsEvent: SqsEvent = {
    Records: [
      {
        messageId: 'm1',
        body: '{}',
        attributes: { ApproximateReceiveCount: '1' },
        eventSource: 'aws:sqs',
        eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:alerts',
      },
    ],
  };

  it('rejects with a TypeError naming the queue when the receiver has no SQS queue', async () => {
    const inMemory = receiverWith();
    const durable = receiverWith({ queue: createDurableQueue(createMemoryStore()) });
    for (const [receiver, kind] of [
      [inMemory, 'memory'],
      [durable, durable.queue.kind],
    ] as const) {
      const ran: string[] = [];
      receiver.on('churn_risk_alert', (alert) => void ran.push(alert.userId), { id: 'h' });
      const refusal = await createLambdaHandler(receiver)(sqsEvent).catch((e: unknown) => e);
      expect(refusal).toBeInstanceOf(TypeError);
      expect((refusal as TypeError).message).toContain(`the ${kind} queue`);
      expect((refusal as TypeError).message).toMatch(/, not createSqsQueue\.$/);
      expect(ran).toEqual([]);
    }
  });
});

describe('the README', () => {
  it('testing recipe works: a test delivery in a minimal payload 2.0 event', async () => {
    const secret = 'whsec_readme_recipe';
    const receiver = createReceiver({ secret });
    receivers.push(receiver);
    const seen: string[] = [];
    receiver.on('churn_risk_alert', (alert) => {
      seen.push(alert.userId);
    });
    const handler = createLambdaHandler(receiver);
    const delivery = createTestDelivery({ userId: 'user_readme' }, { secret });
    const result = await handler({
      version: '2.0',
      headers: delivery.headers,
      body: delivery.body,
      isBase64Encoded: false,
      requestContext: { http: { method: 'POST' } },
    });
    expect(result.statusCode).toBe(202);
    expect(seen).toEqual(['user_readme']);
  });
});

describe('a receiver made with an unset secret, on Lambda', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it.each(UNSET_SECRETS)(
    "%s: createReceiver throws a TypeError naming CHURN_RISK_WEBHOOK_SECRET and the function's configuration",
    (_name, secret) => {
      vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'churn-risk-webhook'); // set by Lambda's runtime
      const env: Record<string, unknown> = { CHURN_RISK_WEBHOOK_SECRET: secret };
      expectSecretError(() => {
        createLambdaHandler(createReceiver({ secret: env.CHURN_RISK_WEBHOOK_SECRET as string }));
      }, LAMBDA_HINT);
      // Queue mode (docs/lambda.md): createQueueReceiver with createSqsQueue, the same.
      const queue = createSqsQueue({
        queueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/alerts',
        dedupeTable: 'identities',
        failedTable: 'failed',
      });
      expectSecretError(() => {
        createLambdaHandler(
          createQueueReceiver({ secret: env.CHURN_RISK_WEBHOOK_SECRET as string, queue }),
        );
      }, LAMBDA_HINT);
    },
  );
});
