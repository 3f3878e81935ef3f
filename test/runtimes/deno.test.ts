/**
 * The receiver inside Deno (npm package `deno`): `host.ts` (`receiver.fetch`, and
 * `createHandler` of `@churn-risk/hono` in a Hono app) under `Deno.serve`, TypeScript run from
 * source with the `@churn-risk/source` condition (and `--sloppy-imports`, which maps the `.js`
 * specifiers of the sources to their `.ts` files), one process for every case.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runtimeInfo } from './host-client.js';
import { runRemoteConformanceSuite } from './remote-suite.js';
import {
  locateDeno,
  runtimeAvailability,
  startRuntimeServer,
  type RuntimeServer,
} from './runtime-process.js';

const deno = locateDeno();
const availability = runtimeAvailability('Deno', deno);

describe.skipIf(availability.skip)('Deno (Deno.serve)', () => {
  let server: RuntimeServer | undefined;
  const host = (): RuntimeServer => {
    if (server === undefined) throw new Error('the Deno server did not start');
    return server;
  };

  beforeAll(async () => {
    if (availability.failure !== undefined) throw new Error(availability.failure);
    if (deno.missing !== undefined) return;
    server = await startRuntimeServer(
      'deno',
      deno.path,
      [
        'run',
        '--conditions=@churn-risk/source',
        '--sloppy-imports',
        '--no-prompt',
        '--allow-net=127.0.0.1', // and no other permission
        'runtimes/deno-server.ts',
      ],
      { env: { DENO_NO_UPDATE_CHECK: '1' } },
    );
  });

  afterAll(async () => {
    await server?.close();
  });

  it('serves the receiver from Deno itself', async () => {
    expect((await runtimeInfo(host())).runtime).toMatch(/^deno 2\.\d+\.\d+/);
  });

  runRemoteConformanceSuite('receiver.fetch under Deno.serve', host, { mount: 'r' });
  runRemoteConformanceSuite('@churn-risk/hono createHandler under Deno.serve', host, {
    mount: 'hono',
  });
});
