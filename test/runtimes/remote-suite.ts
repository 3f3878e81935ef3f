/**
 * The conformance suite (test/conformance/suite.ts: the receiver's status table, dedupe, the
 * answer before the handler) against a receiver that lives inside another runtime. The runtime
 * serves `host.ts`; each case sets up its own receiver there, sends deliveries over real HTTP, and
 * reads what the handler saw from the host's control routes.
 */
import { signPayload } from '@churn-risk/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { NOW_S, SECRET, makeAlert, signedHeaders } from '../conformance/fixtures.js';
import { expectError, type ConformanceRequest } from '../conformance/suite.js';
import type { HandlerBehaviour, HostMount, HostedReceiverOptions, Observations } from './host.js';
import {
  hostReceiver,
  removeReceiver,
  waitForCalls,
  type HostedReceiver,
  type RemoteHost,
} from './host-client.js';

/** How the suite reaches the receivers. */
export interface RemoteSuiteOptions {
  /** `r`: `receiver.fetch` itself; `hono`: `createHandler(receiver)` in a Hono app. */
  mount: Exclude<HostMount, 'bare'>;
  /**
   * The host hands the receiver workerd's `ctx.waitUntil` and records its use: the suite then
   * checks the alert's processing is held by it (called before the answer, settled after the
   * handler).
   */
  observesWaitUntil?: boolean;
}

/** The events without those of workerd's `ctx.waitUntil` (recorded only where it is observed). */
const withoutWaitUntil = (events: string[]): string[] =>
  events.filter((event) => !event.startsWith('waitUntil'));

let setups = 0;

/** Runs every case of the status table against receivers hosted by `host()`. */
export function runRemoteConformanceSuite(
  name: string,
  host: () => RemoteHost,
  { mount, observesWaitUntil = false }: RemoteSuiteOptions,
): void {
  describe(`conformance: ${name}`, () => {
    const names: string[] = [];

    afterEach(async () => {
      await Promise.all(names.splice(0).map((n) => removeReceiver(host(), n)));
    });

    async function setup(
      options: HostedReceiverOptions = {},
      handler: HandlerBehaviour = 'record',
    ): Promise<HostedReceiver> {
      setups += 1;
      const receiverName = `${mount}-${setups}`;
      const hosted = await hostReceiver(host(), receiverName, { options, handler }, mount);
      names.push(receiverName);
      return hosted;
    }

    function delivery(alert: unknown = makeAlert()): ConformanceRequest {
      const body = JSON.stringify(alert);
      return { method: 'POST', headers: signedHeaders(body), body };
    }

    it('accepts a signed alert with 202 {"received":true} and runs the handler with it', async () => {
      const { send, drain } = await setup();
      const alert = makeAlert({ extraField: 'kept' });
      const response = await send(delivery(alert));
      expect(response.status).toBe(202);
      expect(JSON.parse(response.body)).toEqual({ received: true });
      const { alerts } = await drain();
      expect(alerts).toEqual([
        { alert, id: `${String(alert.userId)}:${String(alert.triggeredAt)}` },
      ]);
    });

    it('answers before an async handler has finished; drain waits for it', async () => {
      const { send, calls, open, drain } = await setup({}, 'gated');
      const response = await send(delivery());
      expect(response.status).toBe(202);
      // The answer is here; the handler has started and is still held at its gate.
      const running = await waitForCalls(
        calls,
        ({ events }) => events.includes('handler started'),
        'the handler to start',
      );
      expect(running.events).not.toContain('handler finished');
      expect(running.stats.running).toBe(1);
      const drained = drain();
      await waitForCalls(calls, ({ events }) => events.includes('drain started'), 'drain');
      await open();
      const { events } = await drained;
      expect(events.indexOf('answered 202')).toBeGreaterThanOrEqual(0);
      expect(events.indexOf('answered 202')).toBeLessThan(events.indexOf('handler finished'));
      expect(withoutWaitUntil(events).slice(-2)).toEqual(['handler finished', 'drained']);
      if (observesWaitUntil) {
        // ctx.waitUntil got the processing before the answer, and it settled only after the handler.
        expect(events.indexOf('waitUntil called')).toBeGreaterThanOrEqual(0);
        expect(events.indexOf('waitUntil called')).toBeLessThan(events.indexOf('answered 202'));
        const settled = await waitForCalls(
          calls,
          (observations) => observations.events.includes('waitUntil settled'),
          'the waitUntil promise to settle',
        );
        expect(settled.events.indexOf('waitUntil settled')).toBeGreaterThan(
          settled.events.indexOf('handler finished'),
        );
      }
    });

    it('answers a redelivered alert 202 with duplicate:true and runs the handler once', async () => {
      const { send, drain } = await setup();
      const alert = makeAlert();
      const first = await send(delivery(alert));
      const second = await send(delivery(alert));
      const { alerts } = await drain();
      expect(JSON.parse(first.body)).toEqual({ received: true });
      expect(second.status).toBe(202);
      expect(JSON.parse(second.body)).toEqual({ received: true, duplicate: true });
      expect(alerts).toHaveLength(1);
    });

    it('ignores a verified event it has no schema for with 202', async () => {
      const { send, drain } = await setup();
      const response = await send(delivery({ event: 'score_recomputed', userId: 'u1' }));
      const { alerts } = await drain();
      expect(response.status).toBe(202);
      expect(alerts).toHaveLength(0);
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
      const { send, drain } = await setup({ maxBodyBytes: 256 });
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
      const { alerts } = await drain();
      expect(alerts).toHaveLength(1);
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
      const { send, drain } = await setup();
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
      const { alerts } = await drain();
      expect(alerts).toHaveLength(0);
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
      const { send, drain } = await setup();
      expectError(await send(delivery(makeAlert({ score: 1.5 }))), 400, 'INVALID_PAYLOAD');
      const { alerts } = await drain();
      expect(alerts).toHaveLength(0);
    });

    it('answers 503 OVERLOADED with Retry-After when the queue is full', async () => {
      const { send, calls, open, drain } = await setup({ concurrency: 1, maxQueue: 1 }, 'gated');
      const started = (observations: Observations): number =>
        observations.events.filter((event) => event === 'handler started').length;
      expect((await send(delivery())).status).toBe(202); // runs
      await waitForCalls(calls, (observations) => started(observations) === 1, 'the first run');
      expect((await send(delivery())).status).toBe(202); // waits in the queue
      const rejected = await send(delivery());
      expectError(rejected, 503, 'OVERLOADED');
      expect(rejected.headers['retry-after']).toMatch(/^\d+$/);
      await open();
      expect(started(await drain())).toBe(2);
    });

    it('answers 503 CLOSED with Retry-After once the receiver is closed', async () => {
      const { send, close } = await setup();
      await close();
      const response = await send(delivery());
      expectError(response, 503, 'CLOSED');
      expect(response.headers['retry-after']).toMatch(/^\d+$/);
    });

    it('in sync mode runs the handler before answering 202', async () => {
      const { send, calls } = await setup({ mode: 'sync' });
      const response = await send(delivery());
      expect(response.status).toBe(202);
      expect(withoutWaitUntil((await calls()).events)).toEqual(['handled', 'answered 202']);
    });

    it('in sync mode answers 500 HANDLER_FAILED when a handler fails after its retries', async () => {
      const { send, calls } = await setup({ mode: 'sync', retries: 0 }, 'fail');
      expectError(await send(delivery()), 500, 'HANDLER_FAILED');
      expect((await calls()).errors).toBe(1);
    });
  });
}
