import { AT_RISK_DEFAULTS, atRiskQuerySchema, userIdSchema } from '../wire/schemas.js';
import type { AtRiskOptions } from './types.js';
import { parseInput } from './validate-input.js';

/** `/v1/users/{userId}/{rest}` with `userId` validated and percent-encoded. */
export function userPath(userId: unknown, rest: string): string {
  return `/v1/users/${encodeURIComponent(parseInput(userIdSchema, userId, 'userId'))}/${rest}`;
}

/**
 * The query of `GET /v1/at-risk`, validated: `threshold` (default 0.5), `limit` (default 50) and
 * `offset` (default 0) always, `plan` when given.
 */
export function atRiskQuery(options: AtRiskOptions): URLSearchParams {
  const query = parseInput(
    atRiskQuerySchema,
    {
      threshold: options.threshold ?? AT_RISK_DEFAULTS.threshold,
      plan: options.plan,
      limit: options.limit ?? AT_RISK_DEFAULTS.limit,
      offset: options.offset ?? AT_RISK_DEFAULTS.offset,
    },
    'options',
  );
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined) params.set(name, String(value));
  }
  return params;
}
