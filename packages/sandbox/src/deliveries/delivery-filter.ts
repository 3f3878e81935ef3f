import type { DeliveryState } from './delivery-record.js';

/** The states a delivery can be in, for validating the `status` filter. */
export const DELIVERY_STATES: readonly DeliveryState[] = ['pending', 'delivered', 'failed'];

/** Filters of `GET /v1/deliveries` and `deliveries.list()`; absent fields match everything. */
export interface DeliveryFilter {
  /** Only deliveries in this state. */
  status?: DeliveryState | undefined;
  /** Only deliveries of alerts for this user. */
  userId?: string | undefined;
}

/** Whether a delivery (its state and its alert's user) passes a filter. */
export function matchesFilter(
  record: { state: DeliveryState; alert: { userId: string } },
  filter: DeliveryFilter,
): boolean {
  return (
    (filter.status === undefined || record.state === filter.status) &&
    (filter.userId === undefined || record.alert.userId === filter.userId)
  );
}
