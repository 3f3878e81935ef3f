import { ChurnRiskError, isChurnRiskError } from '@churn-risk/core';
import { SandboxClient } from '../client/sandbox-client.js';
import type { DeliveryFilter } from '../deliveries/delivery-filter.js';
import type { DeliveryRecord } from '../deliveries/delivery-record.js';
import { UsageError } from './cli-io.js';
import { ENV, fromEnv } from './env-defaults.js';
import { DEFAULT_SANDBOX_PORT } from './sandbox-command.js';

/** The flags of the commands that talk to a running sandbox. */
export const CONNECTION_FLAGS = {
  url: { type: 'string' },
  'api-key': { type: 'string' },
} as const;

/** Help lines of `CONNECTION_FLAGS`. */
export const CONNECTION_HELP = `  --url <url>        The sandbox's URL (default $CHURN_RISK_SANDBOX_URL, else http://127.0.0.1:${DEFAULT_SANDBOX_PORT})
  --api-key <key>    The sandbox's API key (default $CHURN_RISK_API_KEY)`;

/**
 * Checks a URL flag the CLI will contact; `fetch` refuses a URL with a `user:password@` part, so
 * that is a `UsageError` (which does not repeat the URL, so the password is not printed).
 */
export function checkedUrl(flag: string, url: string): URL {
  if (!/^https?:\/\//i.test(url) || !URL.canParse(url))
    throw new UsageError(`${flag} must be an http:// or https:// URL, got "${url}".`);
  const parsed = new URL(url);
  if (parsed.username !== '' || parsed.password !== '')
    throw new UsageError(`${flag} must not contain a user name or password.`);
  return parsed;
}

/** `text` with each whole occurrence of `secret` (a token, not part of a longer one) replaced. */
export function redact(text: string, secret: string, label: string): string {
  const escaped = secret.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return text.replace(new RegExp(`(?<![\\w-])${escaped}(?![\\w-])`, 'g'), label);
}

/** The innermost message of an error's `cause` chain (`connect ECONNREFUSED 127.0.0.1:4010`). */
export function rootCause(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (!(current.cause instanceof Error)) return current.message;
    current = current.cause;
  }
  return current instanceof Error ? current.message : String(current);
}

/**
 * A failed call to a running sandbox: the message names the URL contacted (and never holds the
 * API key). `code` and `status` are the `ServiceError`'s.
 */
export class SandboxContactError extends ChurnRiskError {
  override readonly name = 'SandboxContactError';
  readonly url: string;
  declare readonly code: string;
  declare readonly status: number | undefined;

  constructor(url: string, code: string, status: number | undefined, message: string) {
    super(message);
    this.url = url;
    this.code = code;
    this.status = status;
  }
}

/** A running sandbox as the CLI's commands reach it; every failure is a `SandboxContactError`. */
export interface SandboxConnection {
  /** The sandbox's URL, as printed. */
  readonly url: string;
  listDeliveries(filter?: DeliveryFilter): Promise<DeliveryRecord[]>;
  replay(deliveryId: string): Promise<DeliveryRecord>;
  sendTestAlert(userId: string): Promise<DeliveryRecord>;
}

function contactError(url: string, apiKey: string, error: unknown): SandboxContactError {
  const hide = (text: string): string => redact(text, apiKey, '[API key]');
  if (!isChurnRiskError(error, 'ServiceError')) {
    return new SandboxContactError(
      url,
      'NETWORK_ERROR',
      undefined,
      hide(`${url}: ${rootCause(error)}`),
    );
  }
  if (error.status === undefined) {
    return new SandboxContactError(
      url,
      error.code,
      undefined,
      hide(
        `could not reach ${url} (${error.code}: ${rootCause(error)}). Is "churn-risk sandbox" running there?`,
      ),
    );
  }
  const hint =
    error.status === 401 || error.status === 403
      ? ` Is the sandbox you mean listening at ${url} (another process may hold the port), and is --api-key (or CHURN_RISK_API_KEY) its key?`
      : '';
  return new SandboxContactError(
    url,
    error.code,
    error.status,
    hide(`${url} answered HTTP ${error.status} ${error.code}: ${error.message}${hint}`),
  );
}

/**
 * The running sandbox of `--url` and `--api-key` (or `$CHURN_RISK_SANDBOX_URL` and
 * `$CHURN_RISK_API_KEY`).
 */
export function connectFromFlags(
  flags: { url?: string | undefined; 'api-key'?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): SandboxConnection {
  const url =
    flags.url ?? fromEnv(env, ENV.sandboxUrl) ?? `http://127.0.0.1:${DEFAULT_SANDBOX_PORT}`;
  const shown = checkedUrl('--url', url).href.replace(/\/$/, '');
  const apiKey = flags['api-key'] ?? fromEnv(env, ENV.apiKey);
  if (apiKey === undefined || apiKey === '')
    throw new UsageError('--api-key is required (or set CHURN_RISK_API_KEY).');
  const client = new SandboxClient({ baseUrl: url, apiKey });
  const contact = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      throw contactError(shown, apiKey, error);
    }
  };
  return {
    url: shown,
    listDeliveries: (filter) => contact(() => client.listDeliveries(filter)),
    replay: (deliveryId) => contact(() => client.replay(deliveryId)),
    sendTestAlert: (userId) => contact(() => client.sendTestAlert(userId)),
  };
}
