import * as wire from '@churn-risk/core/wire';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../server/api-error.js';
import type { ChurnRiskService } from '../service/churn-risk-service.js';
import { parseInput } from './parse-input.js';

const testAlertSchema = z.strictObject({ userId: wire.userIdSchema });

/**
 * `POST /v1/sandbox/test-alert {"userId"}`: 202 with the new delivery of an alert built from the
 * user's current risk, to the user's watch webhook (the watch's cooldown does not apply); 404 when
 * the user has no watch.
 */
export function registerTestAlertRoute(app: FastifyInstance, service: ChurnRiskService): void {
  app.post('/v1/sandbox/test-alert', (request, reply) => {
    const { userId } = parseInput(testAlertSchema, request.body, 'test alert');
    const record = service.sendTestAlert(userId);
    if (!record) throw new ApiError('NOT_FOUND', `No watch on user "${userId}".`);
    return reply.code(202).send(record);
  });
}
