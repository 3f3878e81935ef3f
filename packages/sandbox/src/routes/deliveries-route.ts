import type { FastifyInstance } from 'fastify';
import type { Deliveries } from '../deliveries/delivery-log.js';

/** `GET /v1/deliveries`: the delivery log, oldest first, as `{ deliveries: DeliveryRecord[] }`. */
export function registerDeliveriesRoute(app: FastifyInstance, deliveries: Deliveries): void {
  app.get('/v1/deliveries', () => ({ deliveries: deliveries.list() }));
}
