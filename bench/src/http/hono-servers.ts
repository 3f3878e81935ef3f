/**
 * The Hono servers of the HTTP benchmark, on Node through `@hono/node-server`: the hand-written
 * verifying route (the reference), `createHandler(receiver)` (also on the before build's packages:
 * `hono-ours-before`), and a route that verifies nothing.
 */
import { serve } from '@hono/node-server';
import { createReceiver } from '@churn-risk/core';
import { createHandler } from '@churn-risk/hono';
import { Hono } from 'hono';
import type { AddressInfo } from 'node:net';
import { SECRET, WEBHOOK_PATH } from '../lib/alert.js';
import { handVerified } from '../lib/hand-check.js';
import { importBefore, type PackageModules } from '../lib/packages.js';

const ACCEPTED = { received: true };
const REFUSED = { error: { code: 'INVALID_SIGNATURE', message: 'no' } };
const MAX_BODY_BYTES = 1_048_576;

/** `createHandler(receiver)` on a core and adapter: the working tree's, or the before build's. */
function honoOurs(
  core: Pick<PackageModules['@churn-risk/core'], 'createReceiver'>,
  adapter: Pick<PackageModules['@churn-risk/hono'], 'createHandler'>,
): Promise<number> {
  const receiver = core.createReceiver({ secret: SECRET });
  receiver.on('churn_risk_alert', () => undefined);
  const app = new Hono();
  app.post(WEBHOOK_PATH, adapter.createHandler(receiver));
  return listen(app);
}

function listen(app: Hono): Promise<number> {
  return new Promise((resolve) => {
    serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
      resolve(info.port);
    });
  });
}

export const HONO_SERVERS: Record<string, () => Promise<number>> = {
  'hono-bare': () => {
    const app = new Hono();
    app.post(WEBHOOK_PATH, async (c) => {
      await c.req.json();
      return c.json(ACCEPTED, 202);
    });
    return listen(app);
  },
  'hono-hand': () => {
    const app = new Hono();
    app.post(WEBHOOK_PATH, async (c) => {
      // The declared length bounds the body (what hono/body-limit checks); then the raw bytes.
      if (Number(c.req.header('content-length') ?? 0) > MAX_BODY_BYTES) {
        return c.json({ error: { code: 'PAYLOAD_TOO_LARGE', message: 'too large' } }, 413);
      }
      const body = Buffer.from(await c.req.arrayBuffer());
      const ok = handVerified(
        body,
        c.req.header('x-service-signature'),
        c.req.header('x-service-timestamp'),
      );
      return ok ? c.json(ACCEPTED, 202) : c.json(REFUSED, 401);
    });
    return listen(app);
  },
  'hono-ours': () => honoOurs({ createReceiver }, { createHandler }),
  // `--before=<git-ref>`: the same on the before build's core and adapter (lib/packages.ts).
  'hono-ours-before': async () =>
    honoOurs(await importBefore('@churn-risk/core'), await importBefore('@churn-risk/hono')),
};
