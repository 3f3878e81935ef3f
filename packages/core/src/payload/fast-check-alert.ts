import { regexes } from 'zod/v4/core';

/** zod's own `z.iso.datetime()` pattern (UTC `Z`, any fraction of a second), so both agree. */
const DATETIME: RegExp = regexes.datetime({});

/**
 * True when `json` (a parsed JSON object whose `event` is `churn_risk_alert`) passes every check of
 * `churnRiskAlertSchema`, checked by hand without allocating. A property test holds it to the zod
 * schema: it never says yes where zod says no. When it says no, the caller asks zod, for the
 * decision and the message.
 */
export function isValidAlert(json: object): boolean {
  const { userId, score, tier, signals, recommendation, triggeredAt } = json as Record<
    string,
    unknown
  >;
  if (typeof userId !== 'string' || userId.length === 0) return false;
  if (typeof score !== 'number' || !(score >= 0 && score <= 1)) return false;
  if (tier !== 'low' && tier !== 'medium' && tier !== 'high') return false;
  if (!Array.isArray(signals)) return false;
  for (const signal of signals as unknown[]) if (typeof signal !== 'string') return false;
  if (typeof recommendation !== 'string') return false;
  return typeof triggeredAt === 'string' && DATETIME.test(triggeredAt);
}
