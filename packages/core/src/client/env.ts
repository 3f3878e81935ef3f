/** The environment variable `new ChurnRiskClient()` takes the API key from when `apiKey` is absent. */
export const API_KEY_ENV = 'CHURN_RISK_API_KEY';

/**
 * The environment variable `new ChurnRiskClient()` takes the base URL from when neither `baseUrl`
 * nor `env` is given.
 */
export const BASE_URL_ENV = 'CHURN_RISK_BASE_URL';

/**
 * The value of the environment variable `name`, or `undefined` when it is unset or empty, or where
 * there is no `process.env` (Workers, browsers) or reading it is refused (Deno without
 * `--allow-env`).
 */
export function readEnvVar(name: string): string | undefined {
  if (typeof process === 'undefined') return undefined;
  let value: string | undefined;
  try {
    value = (process as { env?: Record<string, string | undefined> }).env?.[name];
  } catch {
    return undefined;
  }
  return typeof value === 'string' && value !== '' ? value : undefined;
}
