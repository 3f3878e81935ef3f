/** The environment variables the CLI's flags default to. */
export const ENV = {
  /** `--api-key` of `sandbox` and of the commands that talk to a running sandbox. */
  apiKey: 'CHURN_RISK_API_KEY',
  /** `--secret` of `trigger`, `--webhook-secret` of `sandbox`. */
  webhookSecret: 'CHURN_RISK_WEBHOOK_SECRET',
  /** `--url` of the commands that talk to a running sandbox. */
  sandboxUrl: 'CHURN_RISK_SANDBOX_URL',
} as const;

/** The value of `name` in `env`, `undefined` when it is unset or empty. */
export function fromEnv(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}
