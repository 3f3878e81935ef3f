/**
 * The receiver inside Bun (npm package `bun`): `host.ts` (`receiver.fetch`, and
 * `createHandler` of `@churn-risk/hono` in a Hono app) under `Bun.serve`, TypeScript run from
 * source with the `@churn-risk/source` condition, one process for every case.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runtimeInfo } from './host-client.js';
import { runRemoteConformanceSuite } from './remote-suite.js';
import {
  locateBun,
  runtimeAvailability,
  startRuntimeServer,
  type RuntimeServer,
} from './runtime-process.js';

const bun = locateBun();
const availability = runtimeAvailability('Bun', bun);

describe.skipIf(availability.skip)('Bun (Bun.serve)', () => {
  let server: RuntimeServer | undefined;
  const host = (): RuntimeServer => {
    if (server === undefined) throw new Error('the Bun server did not start');
    return server;
  };

  beforeAll(async () => {
    if (availability.failure !== undefined) throw new Error(availability.failure);
    if (bun.missing !== undefined) return;
    server = await startRuntimeServer('bun', bun.path, [
      '--conditions=@churn-risk/source',
      'runtimes/bun-server.ts',
    ]);
  });

  afterAll(async () => {
    await server?.close();
  });

  it('serves the receiver from Bun itself', async () => {
    expect((await runtimeInfo(host())).runtime).toMatch(/^bun 1\.\d+\.\d+/);
  });

  runRemoteConformanceSuite('receiver.fetch under Bun.serve', host, { mount: 'r' });
  runRemoteConformanceSuite('@churn-risk/hono createHandler under Bun.serve', host, {
    mount: 'hono',
  });
});
