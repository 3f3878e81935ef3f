import { SandboxClient } from '../client/sandbox-client.js';
import { UsageError } from './cli-io.js';
import { DEFAULT_SANDBOX_PORT } from './sandbox-command.js';

/** The flags of the commands that talk to a running sandbox. */
export const CONNECTION_FLAGS = {
  url: { type: 'string' },
  'api-key': { type: 'string' },
} as const;

/** Help lines of `CONNECTION_FLAGS`. */
export const CONNECTION_HELP = `  --url <url>        The sandbox's URL (default $CHURN_RISK_SANDBOX_URL, else http://127.0.0.1:${DEFAULT_SANDBOX_PORT})
  --api-key <key>    The sandbox's API key (default $CHURN_RISK_API_KEY)`;

/** A `SandboxClient` for `--url` and `--api-key` (or their environment variables). */
export function clientFromFlags(
  flags: { url?: string | undefined; 'api-key'?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): SandboxClient {
  const url =
    flags.url ?? env['CHURN_RISK_SANDBOX_URL'] ?? `http://127.0.0.1:${DEFAULT_SANDBOX_PORT}`;
  if (!/^https?:\/\//.test(url) || !URL.canParse(url))
    throw new UsageError(`--url must be an http:// or https:// URL, got "${url}".`);
  const apiKey = flags['api-key'] ?? env['CHURN_RISK_API_KEY'];
  if (apiKey === undefined || apiKey === '')
    throw new UsageError('--api-key is required (or set CHURN_RISK_API_KEY).');
  return new SandboxClient({ baseUrl: url, apiKey });
}
