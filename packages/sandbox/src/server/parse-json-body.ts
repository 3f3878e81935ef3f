import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './api-error.js';

const rawBodies = new WeakMap<FastifyRequest, string>();

/** The raw text of a request's JSON body, as received; `''` when it had none. */
export function rawBodyOf(request: FastifyRequest): string {
  return rawBodies.get(request) ?? '';
}

/**
 * JSON bodies: an empty body is no body (a DELETE may carry `Content-Type: application/json`),
 * `__proto__` keys are dropped, and malformed JSON is a `VALIDATION_ERROR`. The raw text is kept
 * (`rawBodyOf`) for the idempotency check.
 */
export function registerJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    rawBodies.set(request, text);
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    try {
      done(
        null,
        JSON.parse(text, (key, value: unknown) => (key === '__proto__' ? undefined : value)),
      );
    } catch {
      done(new ApiError('VALIDATION_ERROR', 'The request body is not valid JSON.'), undefined);
    }
  });
}
