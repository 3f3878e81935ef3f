import { createTestDelivery } from '@churn-risk/core/testing';
import type { DeliveryRecord } from '@churn-risk/sandbox';

/** What the redeliveries got. */
export interface Redelivered {
  sent: number;
  /** Answered `202 {"duplicate":true}`. */
  duplicates: number;
}

/**
 * Sends `count` delivered alerts again, freshly signed, each to the web process that did NOT get
 * it first: what happens when the service redelivers and a load balancer picks another instance.
 * Both instances share the identities in the queue's store, so each is a duplicate and no handler runs again.
 */
export async function redeliverElsewhere(
  deliveries: readonly DeliveryRecord[],
  secret: string,
  count: number,
): Promise<Redelivered> {
  const webhooks = [...new Set(deliveries.map((record) => record.webhook))];
  const chosen = deliveries.filter((record) => record.state === 'delivered').slice(0, count);
  const answers = await Promise.all(
    chosen.map(async (record) => {
      const other = webhooks.find((webhook) => webhook !== record.webhook) ?? record.webhook;
      const { headers, body } = createTestDelivery(record.alert, { secret });
      const response = await fetch(other, { method: 'POST', headers, body });
      const answer = (await response.json()) as { duplicate?: boolean };
      return response.status === 202 && answer.duplicate === true;
    }),
  );
  return { sent: chosen.length, duplicates: answers.filter(Boolean).length };
}
