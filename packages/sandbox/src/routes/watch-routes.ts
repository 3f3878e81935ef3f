import * as wire from '@churn-risk/core/wire';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../server/api-error.js';
import type { ChurnRiskService } from '../service/churn-risk-service.js';
import { parseInput, parseUserId, type UserParams } from './parse-input.js';

/**
 * `PUT /v1/users/:userId/watch` (200 WatchedUser; replaces any earlier watch) and
 * `DELETE /v1/users/:userId/watch` (204; 404 when none). The webhook must be `https://`, or
 * `http://` to a loopback host (the sandbox is a local service). The user need not exist yet.
 */
export function registerWatchRoutes(app: FastifyInstance, service: ChurnRiskService): void {
  app.put<{ Params: UserParams }>('/v1/users/:userId/watch', (request) => {
    const userId = parseUserId(request.params);
    const options = parseInput(wire.watchOptionsSchema, request.body, 'watch');
    if (!wire.isAllowedWebhookUrl(options.webhook, true)) {
      throw new ApiError('VALIDATION_ERROR', 'Invalid watch.', [
        {
          path: 'webhook',
          message: 'webhook must be an https:// URL (http:// only to a loopback host)',
        },
      ]);
    }
    return service.watch(userId, options);
  });

  app.delete<{ Params: UserParams }>('/v1/users/:userId/watch', (request, reply) => {
    const userId = parseUserId(request.params);
    if (!service.unwatch(userId)) throw new ApiError('NOT_FOUND', `No watch on user "${userId}".`);
    return reply.code(204).send();
  });
}
