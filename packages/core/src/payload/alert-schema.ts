// zod/mini, not `zod`: its functions tree-shake, so a bundled receiver (a Worker, a Lambda) holds
// only the checks this schema uses, not the whole of zod (SPEC 18, "Bundle").
import * as z from 'zod/mini';

/** Risk tiers: low < 0.4 <= medium < 0.7 <= high. */
export const riskTierSchema = z.enum(['low', 'medium', 'high']);

/** `low`, `medium` or `high`. */
export type RiskTier = z.infer<typeof riskTierSchema>;

/**
 * The `churn_risk_alert` payload, SPEC section 3, as a `zod/mini` schema (`parse`, `safeParse`).
 * Unknown extra fields are kept, so a newer service can add fields without breaking older
 * receivers; `extraFields(alert)` reads them.
 */
export const churnRiskAlertSchema = z.looseObject({
  event: z.literal('churn_risk_alert'),
  userId: z.string().check(z.minLength(1)),
  score: z.number().check(z.gte(0), z.lte(1)),
  tier: riskTierSchema,
  signals: z.array(z.string()),
  recommendation: z.string(),
  /** ISO 8601 UTC date-time (`Z`). */
  triggeredAt: z.iso.datetime(),
});

/**
 * A churn-risk alert as delivered by the service's webhook: exactly the documented fields, so a
 * misspelt one (`alert.scor`) is a type error. Fields a newer service adds stay in the object at
 * run time; read them with `extraFields(alert)`. (A type alias, not an interface, so that an alert
 * still fits a `Record<string, unknown>` parameter.)
 */
export type ChurnRiskAlert = {
  /** Always `'churn_risk_alert'`. */
  event: 'churn_risk_alert';
  /** The user the alert is about (never empty). */
  userId: string;
  /** The churn-risk score, 0 to 1. */
  score: number;
  /** The score's tier: low < 0.4 <= medium < 0.7 <= high. */
  tier: RiskTier;
  /** The signals behind the score, e.g. `'login_drop'`. */
  signals: string[];
  /** What to do about it, in words. */
  recommendation: string;
  /** When the alert was triggered: ISO 8601 UTC date-time (`Z`). */
  triggeredAt: string;
};

/** The documented fields of an alert, those `ChurnRiskAlert` types. */
export const ALERT_FIELDS: readonly (keyof ChurnRiskAlert)[] = [
  'event',
  'userId',
  'score',
  'tier',
  'signals',
  'recommendation',
  'triggeredAt',
];

/**
 * The fields of a delivered alert that `ChurnRiskAlert` does not document (fields a newer service
 * added), as a new object: `extraFields(alert).plan`. Empty when there are none.
 *
 * ```ts
 * receiver.on('churn_risk_alert', async (alert) => {
 *   const { plan } = extraFields(alert); // unknown: check it before use
 *   if (typeof plan === 'string') console.log(plan);
 * });
 * ```
 */
export function extraFields(alert: ChurnRiskAlert): Record<string, unknown> {
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(alert)) {
    if (!(ALERT_FIELDS as readonly string[]).includes(key)) extra[key] = value;
  }
  return extra;
}

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
