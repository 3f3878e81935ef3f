/** The production API (placeholder for the service's real host). */
export const PRODUCTION_BASE_URL = 'https://api.churn-risk.example';

/** The staging API (placeholder for the service's real host). */
export const STAGING_BASE_URL = 'https://api.staging.churn-risk.example';

/** The environments `env` selects. */
export type ClientEnv = 'production' | 'staging';

const BY_ENV: Readonly<Record<ClientEnv, string>> = Object.freeze({
  production: PRODUCTION_BASE_URL,
  staging: STAGING_BASE_URL,
});

/** True when `env` names a known environment. */
export function isClientEnv(env: unknown): env is ClientEnv {
  return env === 'production' || env === 'staging';
}

/**
 * The base URL of a client: `baseUrl` when given (without its trailing slashes), else the
 * environment's, else production.
 */
export function resolveBaseUrl(baseUrl: string | undefined, env: ClientEnv | undefined): string {
  const chosen = baseUrl ?? BY_ENV[env ?? 'production'];
  return chosen.replace(/\/+$/, '');
}
