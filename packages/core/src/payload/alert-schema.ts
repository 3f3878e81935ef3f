// zod/mini, not `zod`: its functions tree-shake, so a bundled receiver (a Worker, a Lambda) holds
// only the checks this schema uses, not the whole of zod.
import * as z from 'zod/mini';

/** Risk tiers: low < 0.4 <= medium < 0.7 <= high. */
export const riskTierSchema = z.enum(['low', 'medium', 'high']);

/** `low`, `medium` or `high`. */
export type RiskTier = z.infer<typeof riskTierSchema>;

/** Years whose February has 29 days: divisible by 4 and not by 100, or divisible by 400. */
const LEAP_YEAR = String.raw`(?:\d\d(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)`;
/** A calendar date, `YYYY-MM-DD`: each month with its own number of days. */
const DATE =
  String.raw`(?:\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|02-(?:0[1-9]|1\d|2[0-8]))` +
  String.raw`|${LEAP_YEAR}-02-29)`;

/**
 * An ISO 8601 UTC date-time as RFC 3339 writes it, and as `z.iso.datetime()` accepts it since
 * zod 4.2: a calendar date (leap years counted), `T`, hours, minutes and seconds, any fraction of
 * a second, and `Z` (`2026-01-15T12:00:00.000Z`, what `Date#toISOString` gives). A pattern of
 * its own rather than `z.iso.datetime()`: zod's pattern builder and format classes would add
 * weight to every bundled receiver, and zod 4.0 and 4.1 also took a time without seconds,
 * so the answer depended on the zod version installed. A property test holds it to
 * `z.iso.datetime()`.
 */
export const UTC_DATE_TIME = new RegExp(
  String.raw`^${DATE}T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?Z$`,
);

/*
 * The three bounded fields are checked by `z.check`s of core's own, which raise exactly the issues
 * zod's `z.minLength(1)`, `z.gte(0)`/`z.lte(1)` and `z.iso.datetime()` raise (code, origin,
 * bound, input: so messages and locales word them the same), without those checks' classes and
 * pattern builder, which would add weight to every bundled receiver. A property test
 * (alert-checks.test.ts) holds the schema's every decision and issue to one built with zod's own
 * checks.
 */

/** `userId`: at least one character (`z.minLength(1)`). */
const notEmpty = z.check<string>((payload) => {
  if (payload.value.length >= 1) return;
  payload.issues.push({
    code: 'too_small',
    origin: 'string',
    minimum: 1,
    inclusive: true,
    input: payload.value,
    continue: true,
  });
});

/** `score`: 0 to 1, both included (`z.gte(0)`, `z.lte(1)`). */
const zeroToOne = z.check<number>((payload) => {
  const value = payload.value;
  if (value >= 0 && value <= 1) return;
  payload.issues.push(
    value < 0
      ? {
          code: 'too_small',
          origin: 'number',
          minimum: 0,
          inclusive: true,
          input: value,
          continue: true,
        }
      : {
          code: 'too_big',
          origin: 'number',
          maximum: 1,
          inclusive: true,
          input: value,
          continue: true,
        },
  );
});

/** `triggeredAt`: an ISO 8601 UTC date-time, seconds required (`UTC_DATE_TIME`). */
const utcDateTime = z.check<string>((payload) => {
  if (UTC_DATE_TIME.test(payload.value)) return;
  payload.issues.push({
    code: 'invalid_format',
    format: 'datetime',
    origin: 'string',
    input: payload.value,
    continue: true,
  });
});

/**
 * The `churn_risk_alert` payload, as a `zod/mini` schema (`parse`, `safeParse`).
 * Unknown extra fields are kept, so a newer service can add fields without breaking older
 * receivers; `extraFields(alert)` reads them.
 */
export const churnRiskAlertSchema = z.looseObject({
  // A one-value `z.enum`, not `z.literal`: the same decisions and issue (`invalid_value`, the one
  // value), and a bundled receiver holds one class for it and `tier` instead of two.
  event: z.enum(['churn_risk_alert']),
  userId: z.string().check(notEmpty),
  score: z.number().check(zeroToOne),
  tier: riskTierSchema,
  signals: z.array(z.string()),
  recommendation: z.string(),
  /** ISO 8601 UTC date-time (`Z`, seconds required). */
  triggeredAt: z.string().check(utcDateTime),
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
