import * as wire from '@churn-risk/core/wire';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../server/api-error.js';
import type { ChurnRiskService } from '../service/churn-risk-service.js';
import { parseInput, parseUserId, type UserParams } from './parse-input.js';

/** `POST /v1/users/:userId/traits` (204) and `GET /v1/users/:userId/risk` (200, 404). */
export function registerUserRoutes(app: FastifyInstance, service: ChurnRiskService): void {
  app.post<{ Params: UserParams }>('/v1/users/:userId/traits', (request, reply) => {
    const userId = parseUserId(request.params);
    const traits = parseInput(wire.userTraitsSchema, request.body, 'traits');
    service.identify(userId, traits);
    return reply.code(204).send();
  });

  app.get<{ Params: UserParams }>('/v1/users/:userId/risk', (request) => {
    const userId = parseUserId(request.params);
    const risk = service.risk(userId);
    if (!risk) throw new ApiError('NOT_FOUND', `No user "${userId}".`);
    return risk;
  });
}
