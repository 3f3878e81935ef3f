import * as wire from '@churn-risk/core/wire';
import type { FastifyInstance } from 'fastify';
import type { ChurnRiskService } from '../service/churn-risk-service.js';
import { parseInput } from './parse-input.js';

/** `POST /v1/events` (202 `{accepted:1}`) and `POST /v1/events/bulk` (202 `{accepted:n}`, 1 to 500). */
export function registerEventRoutes(app: FastifyInstance, service: ChurnRiskService): void {
  app.post('/v1/events', (request, reply) => {
    const item = parseInput(wire.bulkEventItemSchema, request.body, 'event');
    return reply.code(202).send({ accepted: service.track([item]) });
  });

  app.post('/v1/events/bulk', (request, reply) => {
    const { events } = parseInput(wire.bulkEventsRequestSchema, request.body, 'events');
    return reply.code(202).send({ accepted: service.track(events) });
  });
}
