import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

/**
 * `GET /v1/sandbox/state`: the dashboard's snapshot (`DashboardState`) with an `ETag`; a request
 * whose `If-None-Match` names the current ETag gets `304` and no body, so polling is cheap.
 */
export function registerStateRoute(app: FastifyInstance, snapshot: () => unknown): void {
  app.get('/v1/sandbox/state', (request, reply) => {
    const body = JSON.stringify(snapshot());
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    reply.header('etag', etag).header('cache-control', 'no-cache');
    if (request.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(body);
  });
}
