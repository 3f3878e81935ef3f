import type { FastifyInstance } from 'fastify';
import { DELIVERY_STATES, type DeliveryFilter } from '../deliveries/delivery-filter.js';
import type { Deliveries } from '../deliveries/delivery-record.js';
import { ApiError } from '../server/api-error.js';

type RawQuery = Partial<Record<'status' | 'userId', string | string[]>>;

const invalid = (path: string, message: string): ApiError =>
  new ApiError('VALIDATION_ERROR', 'Invalid deliveries query.', [{ path, message }]);

/** The `status` and `userId` filters of `GET /v1/deliveries`, checked. */
export function parseDeliveryFilter(query: RawQuery): DeliveryFilter {
  const { status, userId } = query;
  if (status !== undefined && !DELIVERY_STATES.includes(status as never))
    throw invalid('status', `status must be one of ${DELIVERY_STATES.join(', ')}`);
  if (userId !== undefined && (typeof userId !== 'string' || userId === '' || userId.length > 256))
    throw invalid('userId', 'userId must be one string of 1 to 256 characters');
  return { status: status as DeliveryFilter['status'], userId };
}

/**
 * `GET /v1/deliveries?status=&userId=`: the delivery log, oldest first, as
 * `{ deliveries: DeliveryRecord[] }`, filtered by state (`pending`, `delivered`, `failed`) and user.
 * `POST /v1/deliveries/:id/replay`: 202 with the new delivery (same payload and webhook, signed
 * afresh, its own retries; `replayOf` names the original); 404 for an unknown id.
 */
export function registerDeliveriesRoute(app: FastifyInstance, deliveries: Deliveries): void {
  app.get<{ Querystring: RawQuery }>('/v1/deliveries', (request) => ({
    deliveries: deliveries.list(parseDeliveryFilter(request.query)),
  }));

  app.post<{ Params: { id: string } }>('/v1/deliveries/:id/replay', (request, reply) => {
    const record = deliveries.replay(request.params.id);
    if (!record) throw new ApiError('NOT_FOUND', 'No delivery with this id.');
    return reply.code(202).send(record);
  });
}
