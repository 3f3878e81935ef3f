/**
 * The REST API's wire format: one definition shared by the client (which validates
 * inputs before sending and responses on the way in) and the sandbox service (which validates
 * requests). Change a schema here and both sides follow.
 */
import { z } from 'zod';
import { riskTierSchema } from '../payload/alert-schema.js';

/** Most events in one `POST /v1/events/bulk` request. */
export const MAX_BULK_EVENTS = 500;
/** Longest `userId`, in characters. */
export const MAX_USER_ID_LENGTH = 256;
/** Largest `limit` of an at-risk page. */
export const MAX_PAGE_LIMIT = 200;
/** Defaults of the at-risk query. */
export const AT_RISK_DEFAULTS = Object.freeze({
  threshold: 0.5,
  limit: 50,
  offset: 0,
  pageSize: 100,
});
/** The cooldown pattern: a positive integer without leading zero, then `d` or `h`. */
export const COOLDOWN_PATTERN = /^[1-9]\d*[dh]$/;

/** A free-form value: traits and event properties hold scalars only. */
export const scalarSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const optionalScalar = scalarSchema.optional();

/** A user id: a non-empty string of at most 256 characters. */
export const userIdSchema = z
  .string({ error: 'userId must be a string' })
  .min(1, 'userId must not be empty')
  .max(MAX_USER_ID_LENGTH, `userId must be at most ${MAX_USER_ID_LENGTH} characters`)
  // URL parsing removes the dot segments "." and ".." even percent-encoded, so such a userId
  // would silently reach another route.
  .refine((id) => id !== '.' && id !== '..', 'userId must not be "." or ".."');

/** ISO 8601 date-time, with `Z` or an offset. */
export const isoDateTimeSchema = z.iso.datetime({
  offset: true,
  error: 'must be an ISO 8601 date-time',
});

/** `UserTraits`: scalar trait values, merged into the stored traits. */
export const userTraitsSchema = z
  .object({
    plan: z.string().optional(),
    mrr: z.number().optional(),
    email: z.string().optional(),
    name: z.string().optional(),
    company: z.string().optional(),
    signedUpAt: z.string().optional(),
  })
  .catchall(optionalScalar);

/** An event's properties: string keys, scalar values. */
export const eventPropertiesSchema = z.record(z.string(), optionalScalar);

/** One event: `userId`, `event` name, optional `properties` and ISO 8601 `timestamp`. */
export const bulkEventItemSchema = z.object({
  userId: userIdSchema,
  event: z.string().min(1, 'event name must not be empty'),
  properties: eventPropertiesSchema.optional(),
  timestamp: isoDateTimeSchema.optional(),
});

/** The body of `POST /v1/events/bulk`: 1 to 500 events. */
export const bulkEventsRequestSchema = z.object({
  events: z.array(bulkEventItemSchema).min(1).max(MAX_BULK_EVENTS),
});

/** The answer of the event routes: `{ accepted }`. */
export const acceptedResponseSchema = z.looseObject({ accepted: z.number().int().nonnegative() });

/** A user's churn risk: score, tier, signals, recommendation (extra fields kept). */
export const riskScoreSchema = z.looseObject({
  userId: z.string(),
  score: z.number().min(0).max(1),
  tier: riskTierSchema,
  signals: z.array(z.string()),
  recommendation: z.string(),
});

/** A user in the at-risk list: the same fields as a risk score. */
export const atRiskUserSchema = riskScoreSchema;

/** One page of at-risk users, with `total`, `offset` and `limit`. */
export const atRiskResultSchema = z.looseObject({
  users: z.array(atRiskUserSchema),
  total: z.number().int().nonnegative(),
  offset: z.number().int().nonnegative(),
  limit: z.number().int().positive(),
});

/** A score threshold, 0 to 1. */
export const thresholdSchema = z.number().min(0).max(1);

/** The at-risk query as the client takes it (numbers) and the sandbox parses it (from strings). */
export const atRiskQuerySchema = z.object({
  threshold: thresholdSchema.optional(),
  plan: z.string().min(1).optional(),
  limit: z.number().int().min(1).max(MAX_PAGE_LIMIT).optional(),
  offset: z.number().int().min(0).optional(),
});

/** A watch cooldown such as `"24h"` or `"7d"` (`COOLDOWN_PATTERN`). */
export const cooldownSchema = z
  .string()
  .regex(COOLDOWN_PATTERN, 'cooldown must be a positive whole number then "d" or "h", e.g. "24h"');

/** The body of `PUT /v1/users/{userId}/watch`. */
export const watchOptionsSchema = z.object({
  threshold: thresholdSchema,
  webhook: z.url({ protocol: /^https?$/, error: 'webhook must be an http(s) URL' }),
  cooldown: cooldownSchema,
});

/** A watch as the service stores it. */
export const watchedUserSchema = z.looseObject({
  userId: z.string(),
  threshold: z.number(),
  webhook: z.string(),
  cooldown: z.string(),
});

/** The service's error body: `{ error: { code, message, details? } }`. */
export const errorBodySchema = z.object({
  error: z.looseObject({
    code: z.string(),
    message: z.string(),
    details: z.array(z.unknown()).optional(),
  }),
});

/** Milliseconds of a cooldown string: `"24h"` is 86,400,000. */
export function cooldownToMs(cooldown: string): number {
  const amount = Number(cooldown.slice(0, -1));
  const hours = cooldown.endsWith('d') ? amount * 24 : amount;
  return hours * 3_600_000;
}

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]', '::1']);

/** True for `localhost`, `127.0.0.0/8` and `::1`. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/**
 * The rule for a watch's webhook URL: `https://`, or `http://` to a loopback host when the caller
 * itself talks to a loopback service (the local sandbox).
 */
export function isAllowedWebhookUrl(webhook: string, serviceIsLoopback: boolean): boolean {
  let url: URL;
  try {
    url = new URL(webhook);
  } catch {
    return false;
  }
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && serviceIsLoopback && isLoopbackHost(url.hostname);
}

/** A scalar trait or property value. */
export type Scalar = z.infer<typeof scalarSchema>;
