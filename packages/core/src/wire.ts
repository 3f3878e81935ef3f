/**
 * `@churn-risk/core/wire`: the churn-risk API's messages as data, for tools that speak the API
 * or play the service (the sandbox): the request and response schemas (classic zod), the status
 * codes of its error codes, the client's retry policy, the base URLs, and the webhook events'
 * payload schemas (`zod/mini`).
 *
 * @example
 * import * as wire from '@churn-risk/core/wire';
 *
 * const traits = wire.userTraitsSchema.parse({ plan: 'pro', seats: 12 });
 * wire.codeForStatus(429); // 'RATE_LIMITED'
 */
export * from './wire/schemas.js';
export { STATUS_CODES, codeForStatus } from './client/status-codes.js';
export { RETRY_POLICY } from './client/retry-policy.js';
export { PRODUCTION_BASE_URL, STAGING_BASE_URL } from './client/base-url.js';
export { eventSchemas, riskTierSchema } from './payload/alert-schema.js';
