import { z } from 'zod';

/** Risk tiers: low < 0.4 <= medium < 0.7 <= high. */
export const riskTierSchema = z.enum(['low', 'medium', 'high']);

/**
 * The `churn_risk_alert` payload, SPEC section 3. Unknown extra fields are kept, so a newer
 * service can add fields without breaking older receivers.
 */
export const churnRiskAlertSchema = z.looseObject({
  event: z.literal('churn_risk_alert'),
  userId: z.string().min(1),
  score: z.number().min(0).max(1),
  tier: riskTierSchema,
  signals: z.array(z.string()),
  recommendation: z.string(),
  /** ISO 8601 UTC date-time (`Z`). */
  triggeredAt: z.iso.datetime(),
});

/** A churn-risk alert as delivered by the service's webhook. */
export type ChurnRiskAlert = z.infer<typeof churnRiskAlertSchema>;

/** The event names the receiver knows, each with its payload schema. */
export const eventSchemas = {
  churn_risk_alert: churnRiskAlertSchema,
} as const;

/** Event name to payload type: the map that types `receiver.on(name, handler)`. */
export interface WebhookEventMap {
  churn_risk_alert: ChurnRiskAlert;
}

/** A webhook event name. */
export type WebhookEventName = keyof WebhookEventMap;
