import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './api-error.js';
import type { IdempotencyStore, RequestFingerprint } from './idempotency-store.js';
import { rawBodyOf } from './parse-json-body.js';

/** Header that marks a replayed answer. */
export const REPLAYED_HEADER = 'idempotent-replayed';

const fingerprintOf = (request: FastifyRequest): RequestFingerprint => ({
  method: request.method,
  path: request.url,
  bodyHash: createHash('sha256').update(rawBodyOf(request)).digest('hex'),
});

/**
 * `Idempotency-Key` replay: the first answer (status, content type, body) to a key, with the same API
 * key, is stored and sent again for every later request with that key and the same method, path
 * (with query) and body bytes; the later requests do not run. The same key with a different method,
 * path or body is answered 422 `IDEMPOTENCY_KEY_REUSED` and does not run either (as Stripe does).
 * Answers 5xx are not stored, so a retry runs again. GET requests ignore the header.
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
    const fingerprint = fingerprintOf(request);
    // Waits while the first request with the key runs; claims again if that one was released.
    for (let claim = store.claim(key, fingerprint); claim.kind !== 'first';) {
      if (claim.kind === 'reused') {
        const { method, path } = claim.first;
        const what =
          method === fingerprint.method && path === fingerprint.path
            ? 'with a different request body'
            : `for ${method} ${path}`;
        throw new ApiError(
          'IDEMPOTENCY_KEY_REUSED',
          `This Idempotency-Key was already used ${what}; use a new key for a new request.`,
        );
      }
      const answer = await claim.answer;
      if (answer) {
        reply.code(answer.status).header(REPLAYED_HEADER, 'true');
        if (answer.contentType !== undefined) reply.header('content-type', answer.contentType);
        return reply.send(answer.body === '' ? undefined : answer.body);
      }
      claim = store.claim(key, fingerprint);
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
