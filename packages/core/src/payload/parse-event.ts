import { DeliveryRejectedError } from '../errors/delivery-rejected-error.js';
import {
  eventSchemas,
  UTC_DATE_TIME,
  type ChurnRiskAlert,
  type WebhookEventMap,
  type WebhookEventName,
} from './alert-schema.js';
import { issueMessages } from './issue-messages.js';

const decoder = new TextDecoder('utf-8', { fatal: true });

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
  return typeof triggeredAt === 'string' && UTC_DATE_TIME.test(triggeredAt);
}

/** The identity of an alert: a retried delivery carries the same payload, hence the same id. */
export function alertIdentity(alert: Pick<ChurnRiskAlert, 'userId' | 'triggeredAt'>): string {
  return `${alert.userId}:${alert.triggeredAt}`;
}

/** A verified body, parsed: a known event with its payload, or an event this version ignores. */
export type ParsedEvent =
  | {
      [K in WebhookEventName]: { kind: 'known'; name: K; payload: WebhookEventMap[K] };
    }[WebhookEventName]
  | { kind: 'ignored'; name: string };

function invalid(message: string, cause?: unknown): DeliveryRejectedError {
  return new DeliveryRejectedError('INVALID_PAYLOAD', message, { cause });
}

/**
 * Parses a verified body. Throws `DeliveryRejectedError` `INVALID_PAYLOAD` when it is not UTF-8
 * JSON, not an object, has no `event` name, or is not a valid payload for its known `event`. A JSON object whose `event`
 * has no schema here is returned as `ignored` (the receiver answers 202 and runs nothing).
 */
export function parseEvent(body: Uint8Array): ParsedEvent {
  let json: unknown;
  try {
    json = JSON.parse(decoder.decode(body));
  } catch (error) {
    throw invalid('The body is not valid UTF-8 JSON.', error);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw invalid('The body is not a JSON object.');
  }
  const name = (json as { event?: unknown }).event;
  if (typeof name !== 'string' || name === '') {
    throw invalid('The body has no "event" name.');
  }
  if (!Object.hasOwn(eventSchemas, name)) return { kind: 'ignored', name };
  const eventName = name as WebhookEventName;
  // The usual valid alert skips zod (its copy and its checks cost more than the rest of the
  // path); zod decides, and words the message, whenever the hand-written checks say no.
  if (isValidAlert(json)) {
    return { kind: 'known', name: eventName, payload: json as WebhookEventMap[typeof eventName] };
  }
  const result = eventSchemas[eventName].safeParse(json, { error: issueMessages });
  if (!result.success) {
    const detail = result.error.issues
      .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
      .join('; ');
    throw invalid(`The ${eventName} payload is invalid: ${detail}`, result.error);
  }
  return { kind: 'known', name: eventName, payload: result.data };
}
