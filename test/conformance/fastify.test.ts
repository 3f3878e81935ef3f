import { churnRiskPlugin } from '@churn-risk/fastify';
import Fastify, { type FastifyInstance } from 'fastify';
import { WEBHOOK_PATH } from './fixtures.js';
import { listenLocal, sendOverHttp } from './http-client.js';
import { runConformanceSuite, type MountedAdapter } from './suite.js';

async function appFor(
  receiver: Parameters<typeof churnRiskPlugin>[1]['receiver'],
): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(churnRiskPlugin, { receiver, path: WEBHOOK_PATH });
  await app.ready();
  return app;
}

runConformanceSuite('fastify (inject)', async (receiver) => {
  const app = await appFor(receiver);
  return {
    async send({ method, headers, body }) {
      const response = await app.inject({
        method: method as 'POST',
        url: WEBHOOK_PATH,
        headers,
        ...(body === undefined ? {} : { payload: Buffer.from(body) }),
      });
      return {
        status: response.statusCode,
        headers: response.headers as Record<string, string>,
        body: response.body,
      };
    },
    close: () => app.close(),
  };
});

async function listening(receiver: Parameters<typeof appFor>[0]): Promise<MountedAdapter> {
  const app = await appFor(receiver);
  const base = await listenLocal(app.server);
  return {
    send: (request) => sendOverHttp(`${base}${WEBHOOK_PATH}`, request),
    close: () => app.close(),
  };
}

runConformanceSuite('fastify (listening server)', listening);
runConformanceSuite('fastify (listening server)', listening, { queue: 'redis' });
