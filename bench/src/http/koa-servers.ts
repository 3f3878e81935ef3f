/**
 * The Koa 3 servers of the HTTP benchmark (with `@koa/router`): the hand-written verifying route
 * (the reference), `createMiddleware(receiver)` (also on the before build's packages:
 * `koa-ours-before`), and a route that verifies nothing.
 */
import Router from '@koa/router';
import { createReceiver } from '@churn-risk/core';
import { createMiddleware } from '@churn-risk/koa';
import Koa from 'koa';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SECRET, WEBHOOK_PATH } from '../lib/alert.js';
import { handVerified } from '../lib/hand-check.js';
import { importBefore, type PackageModules } from '../lib/packages.js';

const ACCEPTED = { received: true };
const MAX_BODY_BYTES = 1_048_576;

/** The raw body, refused past `MAX_BODY_BYTES` (what a hand-written route must do at least). */
function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) reject(new Error('too large'));
      else chunks.push(chunk);
    });
    req.on('end', () =>
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)),
    );
    req.on('error', reject);
  });
}

function listen(router: Router): Promise<number> {
  const app = new Koa();
  app.use(router.routes());
  const callback = app.callback();
  const server = createServer((req, res) => void callback(req, res));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

const header = (value: string): string | undefined => (value === '' ? undefined : value);

/** `createMiddleware(receiver)` on a core and adapter: the working tree's, or the before build's. */
function koaOurs(
  core: Pick<PackageModules['@churn-risk/core'], 'createReceiver'>,
  adapter: Pick<PackageModules['@churn-risk/koa'], 'createMiddleware'>,
): Promise<number> {
  const receiver = core.createReceiver({ secret: SECRET });
  receiver.on('churn_risk_alert', () => undefined);
  const router = new Router();
  router.post(WEBHOOK_PATH, adapter.createMiddleware(receiver));
  return listen(router);
}

export const KOA_SERVERS: Record<string, () => Promise<number>> = {
  'koa-bare': () => {
    const router = new Router();
    router.post(WEBHOOK_PATH, async (ctx) => {
      JSON.parse((await readBody(ctx.req)).toString('utf8'));
      ctx.status = 202;
      ctx.body = ACCEPTED;
    });
    return listen(router);
  },
  'koa-hand': () => {
    const router = new Router();
    router.post(WEBHOOK_PATH, async (ctx) => {
      const body = await readBody(ctx.req);
      const ok = handVerified(
        body,
        header(ctx.get('x-service-signature')),
        header(ctx.get('x-service-timestamp')),
      );
      ctx.status = ok ? 202 : 401;
      ctx.body = ok ? ACCEPTED : { error: { code: 'INVALID_SIGNATURE', message: 'no' } };
    });
    return listen(router);
  },
  'koa-ours': () => koaOurs({ createReceiver }, { createMiddleware }),
  // `--before=<git-ref>`: the same on the before build's core and adapter (lib/packages.ts).
  'koa-ours-before': async () =>
    koaOurs(await importBefore('@churn-risk/core'), await importBefore('@churn-risk/koa')),
};
