import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { IdempotencyStore } from './idempotency-store.js';

/** Header that marks a replayed answer. */
export const REPLAYED_HEADER = 'idempotent-replayed';

/**
 * `Idempotency-Key` replay: the first answer (status, content type, body) to a key, with the same API
 * key, is stored and sent again for every later request with that key; the later requests do not
 * run. Answers 5xx are not stored, so a retry runs again. GET requests ignore the header.
 */
export function registerIdempotency(
  app: FastifyInstance,
  store: IdempotencyStore,
  apiKey: string,
): void {
  const owned = new WeakMap<FastifyRequest, string>();

  app.addHook('preHandler', async (request, reply) => {
    const header = request.headers['idempotency-key'];
    if (
      typeof header !== 'string' ||
      header === '' ||
      request.method === 'GET' ||
      request.method === 'HEAD'
    )
      return;
    const key = `${apiKey} ${header}`;
    for (let claimed = store.claim(key); claimed; claimed = store.claim(key)) {
      const answer = await claimed;
      if (answer) {
        reply.code(answer.status).header(REPLAYED_HEADER, 'true');
        if (answer.contentType !== undefined) reply.header('content-type', answer.contentType);
        return reply.send(answer.body === '' ? undefined : answer.body);
      }
    }
    owned.set(request, key);
    return undefined;
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const key = owned.get(request);
    if (key === undefined) return payload;
    owned.delete(request);
    if (
      reply.statusCode >= 500 ||
      (payload !== null && payload !== undefined && typeof payload !== 'string')
    ) {
      store.release(key);
    } else {
      const contentType = reply.getHeader('content-type');
      store.complete(key, {
        status: reply.statusCode,
        contentType: typeof contentType === 'string' ? contentType : undefined,
        body: payload ?? '',
      });
    }
    return payload;
  });

  const releaseUnanswered = (request: FastifyRequest): void => {
    const key = owned.get(request);
    if (key === undefined) return;
    owned.delete(request);
    store.release(key);
  };
  app.addHook('onResponse', (request, _reply, done) => {
    releaseUnanswered(request);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    releaseUnanswered(request);
    done();
  });
}
