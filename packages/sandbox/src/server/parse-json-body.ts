import type { FastifyInstance } from 'fastify';
import { ApiError } from './api-error.js';

/**
 * JSON bodies: an empty body is no body (a DELETE may carry `Content-Type: application/json`),
 * `__proto__` keys are dropped, and malformed JSON is a `VALIDATION_ERROR`.
 */
export function registerJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
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
