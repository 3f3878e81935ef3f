/**
 * The package version, sent in `User-Agent: churn-risk-node/<version>`. A test keeps it equal to
 * the `version` field of packages/core/package.json.
 */
export const VERSION = '0.1.0';

/**
 * The `User-Agent` header value of every request. A plain literal, not built from `VERSION`: a
 * bundle without the API client then drops it (the version test keeps the two in step).
 */
export const USER_AGENT = 'churn-risk-node/0.1.0';
