import { createMiddleware } from '@churn-risk/express';
import express from 'express';
import { createServer } from 'node:http';
import request from 'supertest';
import { WEBHOOK_PATH } from './fixtures.js';
import { mountServer } from './http-client.js';
import { runConformanceSuite, type ConformanceResponse } from './suite.js';

/** A plain app: no body parser, the middleware answers every method at the webhook path. */
function appFor(receiver: Parameters<typeof createMiddleware>[0]): express.Express {
  const app = express();
  app.all(WEBHOOK_PATH, createMiddleware(receiver));
  return app;
}

runConformanceSuite('express (supertest)', async (receiver) => {
  const app = appFor(receiver);
  return {
    async send({ method, headers, body }): Promise<ConformanceResponse> {
      let test = request(app)[method.toLowerCase() as 'post'](WEBHOOK_PATH).set(headers);
      // A string goes out as is; superagent would JSON-encode a Buffer under a JSON content type.
      if (body !== undefined) test = test.send(typeof body === 'string' ? body : Buffer.from(body));
      const response = await test;
      return {
        status: response.status,
        headers: response.headers,
        body: response.text,
      };
    },
    close: async () => undefined,
  };
});

runConformanceSuite('express (listening server)', (receiver) =>
  mountServer(createServer(appFor(receiver)), WEBHOOK_PATH),
);

runConformanceSuite(
  'express (listening server)',
  (receiver) => mountServer(createServer(appFor(receiver)), WEBHOOK_PATH),
  { queue: 'redis' },
);
