/**
 * The receiver inside workerd, the Workers runtime (npm package `miniflare`, which ships the
 * `workerd` binary): `worker.ts` bundled for Workers without `nodejs_compat`, one isolate for every
 * case. On `/r/` the worker passes `ctx.waitUntil` to `receiver.fetch`, and the suite checks that
 * the alert's processing is held by it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAlert, signedHeaders } from '../conformance/fixtures.js';
import type { Observations } from './host.js';
import {
  hostReceiver,
  removeReceiver,
  runtimeInfo,
  waitForCalls,
  type HostedReceiver,
} from './host-client.js';
import { runRemoteConformanceSuite } from './remote-suite.js';
import { bundleHost, startWorkerd, type WorkerdServer } from './workerd-host.js';

describe('workerd (miniflare, module worker)', () => {
  let server: WorkerdServer | undefined;
  const host = (): WorkerdServer => {
    if (server === undefined) throw new Error('workerd did not start');
    return server;
  };

  beforeAll(async () => {
    server = await startWorkerd(await bundleHost());
  });

  afterAll(async () => {
    await server?.close();
  });

  it('serves the receiver from workerd, without Node APIs', async () => {
    expect(await runtimeInfo(host())).toEqual({ runtime: 'workerd', process: 'undefined' });
  });

  it('runs an alert that waited in the queue to the end, in a request kept alive for it', async () => {
    // concurrency 1, and the first alert still running: with a waitUntil the second alert does
    // not wait for the first one's slot (started from the first request, it would be cancelled
    // with it); it runs at once in its own request, and its handler's I/O (a timer) goes on
    // after the first alert's request has nothing left to wait for.
    const receiver = await hostReceiver(
      host(),
      'queued-io',
      { options: { concurrency: 1, maxQueue: 1 }, handler: 'gated-io' },
      'r',
    );
    const count = (observations: Observations, event: string): number =>
      observations.events.filter((seen) => seen === event).length;
    try {
      for (const expectedRuns of [1, 2]) {
        const body = JSON.stringify(makeAlert());
        const response = await receiver.send({
          method: 'POST',
          headers: signedHeaders(body),
          body,
        });
        expect(response.status).toBe(202);
        if (expectedRuns === 1) {
          await waitForCalls(
            receiver.calls,
            (seen) => count(seen, 'handler started') === 1,
            'run 1',
          );
        }
      }
      expect((await receiver.calls()).stats).toMatchObject({ running: 2, queued: 0 });
      await receiver.open();
      const done = await waitForCalls(
        receiver.calls,
        ({ stats }) => stats.running === 0 && stats.queued === 0,
        'both alerts to be processed',
        10_000,
      );
      expect(count(done, 'handler finished')).toBe(2);
      expect(count(done, 'waitUntil settled')).toBe(2);
    } finally {
      await removeReceiver(host(), 'queued-io');
    }
  });

  it('without waitUntil answers 202 and never runs the handler: ctx.waitUntil is what keeps it', async () => {
    const bare = await hostReceiver(
      host(),
      'no-wait-until',
      { options: {}, handler: 'record' },
      'bare',
    );
    const kept = await hostReceiver(host(), 'kept', { options: {}, handler: 'record' }, 'r');
    const send = async (receiver: HostedReceiver): Promise<number> => {
      const body = JSON.stringify(makeAlert());
      return (await receiver.send({ method: 'POST', headers: signedHeaders(body), body })).status;
    };
    try {
      expect(await send(bare)).toBe(202);
      expect(await send(kept)).toBe(202);
      // Both alerts were deferred the same way, the bare one first: once the one whose request
      // ctx.waitUntil kept alive has run, the other one would have run too, if it ever could.
      await waitForCalls(kept.calls, ({ events }) => events.includes('handled'), 'the kept alert');
      const dropped = await bare.calls();
      expect(dropped.events).toEqual(['answered 202']);
      expect(dropped.stats).toMatchObject({ accepted: 1, running: 1 });
    } finally {
      // The bare receiver stays in the isolate: its alert can never finish, so it cannot close.
      await removeReceiver(host(), 'kept');
    }
  });

  runRemoteConformanceSuite('receiver.fetch in a module worker, with ctx.waitUntil', host, {
    mount: 'r',
    observesWaitUntil: true,
  });
  // The Hono app's fetch gets the real (request, env, ctx): createHandler passes the bound
  // c.executionCtx.waitUntil. Without it the gated case's handler could never finish (see above).
  runRemoteConformanceSuite('@churn-risk/hono createHandler in a module worker', host, {
    mount: 'hono',
  });
});
