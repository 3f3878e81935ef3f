import type { FastifyInstance } from 'fastify';

/** Makes `app` hand every body to its routes as the raw bytes (a Buffer), whatever its type. */
export function rawBodyOfAnyType(app: FastifyInstance): void {
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => {
    done(null, body);
  });
}
