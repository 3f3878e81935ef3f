import { createMiddleware } from '@churn-risk/koa';
import Router from '@koa/router';
import Koa from 'koa';
import { createServer, type Server } from 'node:http';
import { WEBHOOK_PATH } from './fixtures.js';
import { mountServer } from './http-client.js';
import { runConformanceSuite, type MountAdapter } from './suite.js';

/** A Koa 3 app whose router answers every method at the webhook path with the middleware. */
function serverFor(receiver: Parameters<typeof createMiddleware>[0]): Server {
  const router = new Router();
  router.all(WEBHOOK_PATH, createMiddleware(receiver));
  const app = new Koa();
  app.use(router.routes());
  const callback = app.callback();
  return createServer((req, res) => void callback(req, res));
}

const mount: MountAdapter = (receiver) => mountServer(serverFor(receiver), WEBHOOK_PATH);

runConformanceSuite('koa (@koa/router, listening server)', mount);
runConformanceSuite('koa (@koa/router, listening server)', mount, { queue: 'redis' });
