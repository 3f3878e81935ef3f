/**
 * One conformance suite for every adapter (the same answers from each): each adapter's test file only
 * says how to mount a receiver and send it a request; the cases below decide what must come back.
 */
import { type Receiver } from '@churn-risk/core';
import { signPayload } from '@churn-risk/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { NOW_S, SECRET, conformanceReceiver, gate, makeAlert, signedHeaders } from './fixtures.js';
import { useRedisMode, type QueueMode } from './redis-mode.js';

/** A request as the suite sends it. `body` is sent as these exact bytes. */
export interface ConformanceRequest {
  method: string;
  headers: Record<string, string>;
  body?: string | Uint8Array<ArrayBuffer>;
}

/** What came back. Header names are lower-case; `body` is the response text. */
export interface ConformanceResponse {
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
}

/** A receiver mounted in an adapter: a way to send it requests, and a way to tear it down. */
export interface MountedAdapter {
  send(request: ConformanceRequest): Promise<ConformanceResponse>;
  close(): Promise<void>;
}

/** Mounts `receiver` in the adapter under test (at `WEBHOOK_PATH` when the adapter has routes). */
export type MountAdapter = (receiver: Receiver) => Promise<MountedAdapter>;

/** An error answer's body. */
export interface ErrorBody {
  error: { code: string; message: string };
}

/** Asserts an error answer of the documented shape that leaks no secret or expected signature. */
export function expectError(
  response: ConformanceResponse,
  status: number,
  code: string,
  secrets: readonly string[] = [],
): ErrorBody {
  expect(response.status, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const parsed = JSON.parse(response.body) as ErrorBody;
  expect(parsed.error.code).toBe(code);
  expect(typeof parsed.error.message).toBe('string');
  for (const secret of [SECRET, ...secrets]) expect(response.body).not.toContain(secret);
  return parsed;
}

/**
 * Runs every case of the receiver's status table against one adapter, with the default in-memory
 * queue or (`queue: 'redis'`) a Redis queue on a real redis-server.
 */
export function runConformanceSuite(
  name: string,
  mount: MountAdapter,
  { queue = 'memory' }: { queue?: QueueMode } = {},
): void {
  describe(`conformance: ${name}${queue === 'redis' ? ', Redis queue' : ''}`, () => {
    const mounted: MountedAdapter[] = [];
    const receivers: Receiver[] = [];
    const redis = queue === 'redis' ? useRedisMode() : undefined;

    afterEach(async () => {
      await Promise.all(mounted.splice(0).map((adapter) => adapter.close()));
      await Promise.all(receivers.splice(0).map((receiver) => receiver.close({ timeoutMs: 5000 })));
    });

    async function setup(
      options: Parameters<typeof conformanceReceiver>[0] = {},
      { unreachable = false }: { unreachable?: boolean } = {},
    ): Promise<{ receiver: Receiver; send: MountedAdapter['send'] }> {
      const receiver = conformanceReceiver(
        redis === undefined ? options : redis.receiverOptions(options, unreachable),
      );
      receivers.push(receiver);
      const adapter = await mount(receiver);
      mounted.push(adapter);
      return { receiver, send: (request) => adapter.send(request) };
    }

    function delivery(alert: unknown = makeAlert()): ConformanceRequest {
      const body = JSON.stringify(alert);
      return { method: 'POST', headers: signedHeaders(body), body };
    }

    it('accepts a signed alert with 202 {"received":true} and runs the handler with it', async () => {
      const { receiver, send } = await setup();
      const seen: unknown[] = [];
      receiver.on('churn_risk_alert', (alert, context) => {
        seen.push({ alert, id: context.id });
      });
      const alert = makeAlert({ extraField: 'kept' });
      const response = await send(delivery(alert));
      expect(response.status).toBe(202);
      expect(JSON.parse(response.body)).toEqual({ received: true });
      await receiver.drain({ timeoutMs: 5000 });
      expect(seen).toEqual([{ alert, id: `${String(alert.userId)}:${String(alert.triggeredAt)}` }]);
    });

    it('answers before an async handler has finished; drain waits for it', async () => {
      const { receiver, send } = await setup();
      const hold = gate();
      const started = gate();
      const events: string[] = [];
      receiver.on('churn_risk_alert', async () => {
        events.push('handler started');
        started.open();
        await hold.promise;
        events.push('handler finished');
      });
      const response = await send(delivery());
      events.push(`answered ${response.status}`);
      await started.promise;
      const drained = receiver.drain({ timeoutMs: 5000 }).then(() => events.push('drained'));
      hold.open();
      await drained;
      expect(events.indexOf('answered 202')).toBeGreaterThanOrEqual(0);
      expect(events.indexOf('answered 202')).toBeLessThan(events.indexOf('handler finished'));
      expect(events.slice(-2)).toEqual(['handler finished', 'drained']);
    });

    it('answers a redelivered alert 202 with duplicate:true and runs the handler once', async () => {
      const { receiver, send } = await setup();
      let runs = 0;
      receiver.on('churn_risk_alert', () => {
        runs += 1;
      });
      const alert = makeAlert();
      const first = await send(delivery(alert));
      const second = await send(delivery(alert));
      await receiver.drain({ timeoutMs: 5000 });
      expect(JSON.parse(first.body)).toEqual({ received: true });
      expect(second.status).toBe(202);
      expect(JSON.parse(second.body)).toEqual({ received: true, duplicate: true });
      expect(runs).toBe(1);
    });

    it('ignores a verified event it has no schema for with 202', async () => {
      const { receiver, send } = await setup();
      let runs = 0;
      receiver.on('churn_risk_alert', () => {
        runs += 1;
      });
      const response = await send(delivery({ event: 'score_recomputed', userId: 'u1' }));
      await receiver.drain({ timeoutMs: 5000 });
      expect(response.status).toBe(202);
      expect(runs).toBe(0);
    });

    for (const method of ['GET', 'PUT', 'DELETE']) {
      it(`answers ${method} with 405 and Allow: POST`, async () => {
        const { send } = await setup();
        const response = await send({ method, headers: {} });
        expectError(response, 405, 'METHOD_NOT_ALLOWED');
        expect(response.headers.allow).toBe('POST');
      });
    }

    it('answers a body larger than maxBodyBytes with 413', async () => {
      const { receiver, send } = await setup({ maxBodyBytes: 256 });
      let runs = 0;
      receiver.on('churn_risk_alert', () => {
        runs += 1;
      });
      const body = JSON.stringify(makeAlert({ padding: 'x'.repeat(2000) }));
      expectError(
        await send({ method: 'POST', headers: signedHeaders(body), body }),
        413,
        'PAYLOAD_TOO_LARGE',
      );
      // A body within the limit still passes on the same mount.
      const small = JSON.stringify(makeAlert());
      expect(small.length).toBeLessThanOrEqual(256);
      const ok = await send({ method: 'POST', headers: signedHeaders(small), body: small });
      expect(ok.status).toBe(202);
      await receiver.drain({ timeoutMs: 5000 });
      expect(runs).toBe(1);
    });

    it('answers 401 MISSING_SIGNATURE without a signature header', async () => {
      const { send } = await setup();
      const request = delivery();
      delete request.headers['x-service-signature'];
      expectError(await send(request), 401, 'MISSING_SIGNATURE');
    });

    it('answers 401 MISSING_TIMESTAMP without a timestamp header', async () => {
      const { send } = await setup();
      const request = delivery();
      delete request.headers['x-service-timestamp'];
      expectError(await send(request), 401, 'MISSING_TIMESTAMP');
    });

    it('answers 401 INVALID_TIMESTAMP for a timestamp that is not digits', async () => {
      const { send } = await setup();
      const request = delivery();
      request.headers['x-service-timestamp'] = `${NOW_S}.5`;
      expectError(await send(request), 401, 'INVALID_TIMESTAMP');
    });

    it('answers 401 INVALID_SIGNATURE and leaks neither the secret nor the expected signature', async () => {
      const { receiver, send } = await setup();
      let runs = 0;
      receiver.on('churn_risk_alert', () => {
        runs += 1;
      });
      const body = JSON.stringify(makeAlert());
      const expected = signPayload({ body, secret: SECRET, timestamp: NOW_S }).signature;
      const headers = signedHeaders(body, { secret: 'not-the-secret' });
      const response = await send({ method: 'POST', headers, body });
      expectError(response, 401, 'INVALID_SIGNATURE', [expected, expected.slice('sha256='.length)]);
      // A body changed after signing fails the same way.
      const tampered = await send({
        method: 'POST',
        headers: signedHeaders(body),
        body: `${body} `,
      });
      expectError(tampered, 401, 'INVALID_SIGNATURE');
      await receiver.drain({ timeoutMs: 5000 });
      expect(runs).toBe(0);
    });

    it('answers 401 TIMESTAMP_OUT_OF_TOLERANCE for a correctly signed old or future delivery', async () => {
      const { send } = await setup();
      for (const timestamp of [NOW_S - 301, NOW_S + 301]) {
        const body = JSON.stringify(makeAlert());
        const response = await send({
          method: 'POST',
          headers: signedHeaders(body, { timestamp }),
          body,
        });
        expectError(response, 401, 'TIMESTAMP_OUT_OF_TOLERANCE');
      }
    });

    it('answers 400 INVALID_PAYLOAD for a signed body that is not JSON', async () => {
      const { send } = await setup();
      const body = 'not json {';
      expectError(
        await send({ method: 'POST', headers: signedHeaders(body), body }),
        400,
        'INVALID_PAYLOAD',
      );
    });

    it('answers 400 INVALID_PAYLOAD for a signed alert that breaks the schema', async () => {
      const { receiver, send } = await setup();
      let runs = 0;
      receiver.on('churn_risk_alert', () => {
        runs += 1;
      });
      expectError(await send(delivery(makeAlert({ score: 1.5 }))), 400, 'INVALID_PAYLOAD');
      await receiver.drain({ timeoutMs: 5000 });
      expect(runs).toBe(0);
    });

    if (queue === 'memory') {
      it('answers 503 OVERLOADED with Retry-After when the queue is full', async () => {
        const { receiver, send } = await setup({ concurrency: 1, maxQueue: 1 });
        const hold = gate();
        const started = gate();
        let runs = 0;
        receiver.on('churn_risk_alert', async () => {
          runs += 1;
          started.open();
          await hold.promise;
        });
        expect((await send(delivery())).status).toBe(202); // runs
        await started.promise;
        expect((await send(delivery())).status).toBe(202); // waits in the queue
        const rejected = await send(delivery());
        expectError(rejected, 503, 'OVERLOADED');
        expect(rejected.headers['retry-after']).toMatch(/^\d+$/);
        hold.open();
        await receiver.drain({ timeoutMs: 5000 });
        expect(runs).toBe(2);
      });
    } else {
      it('answers 503 OVERLOADED with Retry-After when Redis cannot record the alert', async () => {
        const { receiver, send } = await setup({ consume: false }, { unreachable: true });
        let runs = 0;
        receiver.on('churn_risk_alert', () => {
          runs += 1;
        });
        const rejected = await send(delivery());
        expectError(rejected, 503, 'OVERLOADED');
        expect(rejected.headers['retry-after']).toMatch(/^\d+$/);
        expect(runs).toBe(0);
      });
    }

    it('answers 503 CLOSED with Retry-After once the receiver is closed', async () => {
      const { receiver, send } = await setup();
      await receiver.close({ timeoutMs: 5000 });
      const response = await send(delivery());
      expectError(response, 503, 'CLOSED');
      expect(response.headers['retry-after']).toMatch(/^\d+$/);
    });

    if (queue === 'memory') {
      it('in sync mode runs the handler before answering 202', async () => {
        const { receiver, send } = await setup({ mode: 'sync' });
        const events: string[] = [];
        receiver.on('churn_risk_alert', async () => {
          await Promise.resolve();
          events.push('handled');
        });
        const response = await send(delivery());
        events.push(`answered ${response.status}`);
        expect(events).toEqual(['handled', 'answered 202']);
      });

      it('in sync mode answers 500 HANDLER_FAILED when a handler fails after its retries', async () => {
        const { receiver, send } = await setup({ mode: 'sync', retries: 0 });
        const reported: unknown[] = [];
        receiver.on('churn_risk_alert', () => {
          throw new Error(`database down (${SECRET.length})`);
        });
        receiver.onError((error) => {
          reported.push(error);
        });
        expectError(await send(delivery()), 500, 'HANDLER_FAILED');
        expect(reported).toHaveLength(1);
      });
    } else {
      it("refuses mode 'sync' at creation: handlers run in workers after the answer", async () => {
        const options = redis?.receiverOptions({ mode: 'sync' }) ?? {};
        expect(() => conformanceReceiver(options)).toThrow(/mode 'sync' cannot be used/);
        await options.queue?.close();
      });
    }
  });
}
