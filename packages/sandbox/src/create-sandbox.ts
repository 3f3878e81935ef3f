import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { chaosProblem, createChaos, type ChaosOptions } from './chaos/chaos.js';
import { systemClock, type SandboxClock } from './clock/clock.js';
import { createTimeTravel, isManualClock } from './clock/time-travel.js';
import { createDeliveries } from './deliveries/delivery-log.js';
import type { Deliveries, DeliveryRecord } from './deliveries/delivery-record.js';
import { DELIVERY_POLICY } from './deliveries/retry-schedule.js';
import type { DeliveryAttempt } from './deliveries/send-attempt.js';
import { buildApp } from './server/build-app.js';
import type { RateLimitOptions } from './server/rate-limiter.js';
import { createChurnRiskService, type ChurnRiskService } from './service/churn-risk-service.js';

/** Options of `createSandbox`. */
export interface SandboxOptions {
  /** The API key clients must send: non-empty, no whitespace. Default: a random `sk_test_...`. */
  apiKey?: string;
  /** The secret that signs webhook deliveries: non-empty. Default: a random `whsec_...`. */
  webhookSecret?: string;
  /** Port to listen on. Default 0 (any free port). */
  port?: number;
  /** Host to listen on. Default `127.0.0.1`. */
  host?: string;
  /** Time and timers; default the system clock. Use `createManualClock()` in tests. */
  clock?: SandboxClock;
  /** Per-API-key rate limit (429 with `Retry-After`). Default: off. */
  rateLimit?: RateLimitOptions;
  /** Largest request body, in bytes (413 above). Default 1 MiB. */
  maxBodyBytes?: number;
  /** Time-out of one webhook delivery try. Default 10,000 ms. */
  deliveryTimeoutMs?: number;
  /** Called after every delivery try (the CLI prints them). */
  onDeliveryAttempt?: (record: DeliveryRecord, attempt: DeliveryAttempt) => void;
  /** Fastify's request logging. Default off. */
  logger?: boolean;
  /** Duplicates, random delays and bad signatures in the deliveries. Default none. */
  chaos?: ChaosOptions;
}

/** A running sandbox. */
export interface Sandbox {
  /** Base URL for the client, e.g. `http://127.0.0.1:54321`. */
  readonly url: string;
  readonly apiKey: string;
  readonly webhookSecret: string;
  /** The Fastify app (e.g. for `app.inject`). */
  readonly app: FastifyInstance;
  /** The delivery log; `deliveries.idle()` waits for tries in flight. */
  readonly deliveries: Deliveries;
  /** Users, scores and watches, for inspection in tests. */
  readonly service: ChurnRiskService;
  readonly clock: SandboxClock;
  /** `manual` when `clock` can be moved by hand (`createManualClock()`), else `system`. */
  readonly clockMode: 'manual' | 'system';
  /** The dashboard, with the API key in the fragment: `http://127.0.0.1:PORT/dashboard#key=...`. */
  readonly dashboardUrl: string;
  /**
   * Time travel (`POST /v1/sandbox/clock`): moves a manual clock forward by `ms`, one due timer at
   * a time, running the delivery tries that fall due, then rescores every user. Resolves with the
   * new time (ms). Rejects with a `TypeError` on the system clock.
   */
  advanceClock(ms: number): Promise<number>;
  /** Stops delivery timers, aborts tries in flight and closes the server. Safe to call twice. */
  close(): Promise<void>;
}

/** Default largest request body: 1 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 1_048_576;

/** A random API key `sk_test_<32 hex>`. */
export function generateApiKey(): string {
  return `sk_test_${randomBytes(16).toString('hex')}`;
}

/** A random webhook secret `whsec_<48 hex>`. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('hex')}`;
}

/**
 * Checks an explicit `apiKey` or `webhookSecret` option: why it is unusable, or `undefined` when it
 * is fine. An empty secret cannot sign a delivery; an empty key, or one with whitespace, can never
 * match an `Authorization: Bearer <apiKey>` header.
 */
export function credentialProblem(
  name: 'apiKey' | 'webhookSecret',
  value: unknown,
): string | undefined {
  if (typeof value !== 'string' || value === '') return `${name} must be a non-empty string.`;
  if (name === 'apiKey' && /\s/.test(value)) return 'apiKey must not contain whitespace.';
  return undefined;
}

function checkCredential(name: 'apiKey' | 'webhookSecret', value: unknown): void {
  const problem = credentialProblem(name, value);
  if (problem !== undefined) throw new TypeError(`createSandbox: ${problem}`);
}

/**
 * Starts a local churn-risk service and resolves once it listens.
 *
 * @example
 * const sandbox = await createSandbox();
 * const client = new ChurnRiskClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
 * await client.track({ userId: 'u1', event: 'login' });
 * await sandbox.close();
 *
 * @throws TypeError (the promise rejects) when `apiKey` or `webhookSecret` is given but empty (or
 *   the key holds whitespace), before anything starts.
 */
export async function createSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  if (options.apiKey !== undefined) checkCredential('apiKey', options.apiKey);
  if (options.webhookSecret !== undefined) checkCredential('webhookSecret', options.webhookSecret);
  const chaosIssue = options.chaos && chaosProblem(options.chaos);
  if (chaosIssue !== undefined) throw new TypeError(`createSandbox: ${chaosIssue}`);
  const chaos = createChaos(options.chaos);
  const apiKey = options.apiKey ?? generateApiKey();
  const webhookSecret = options.webhookSecret ?? generateWebhookSecret();
  const clock = options.clock ?? systemClock;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const deliveries = createDeliveries({
    clock,
    secret: webhookSecret,
    timeoutMs: options.deliveryTimeoutMs ?? DELIVERY_POLICY.timeoutMs,
    chaos,
    ...(options.onDeliveryAttempt && { onAttempt: options.onDeliveryAttempt }),
  });
  const service = createChurnRiskService(clock, deliveries);
  const advanceClock = isManualClock(clock)
    ? createTimeTravel({
        clock,
        idle: () => deliveries.idle(),
        afterArrival: () => {
          service.rescoreAll();
        },
      })
    : () => Promise.reject(new TypeError('The sandbox runs on the system clock.'));
  const app = buildApp({
    apiKey,
    clock,
    service,
    deliveries,
    chaos: chaos.settings,
    advanceClock,
    maxBodyBytes,
    rateLimit: options.rateLimit,
    logger: options.logger,
  });
  await app.listen({ port: options.port ?? 0, host: options.host ?? '127.0.0.1' });
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  const url = `http://${host}:${address.port}`;
  return {
    url,
    dashboardUrl: `${url}/dashboard#key=${encodeURIComponent(apiKey)}`,
    clockMode: isManualClock(clock) ? 'manual' : 'system',
    advanceClock,
    apiKey,
    webhookSecret,
    app,
    deliveries,
    service,
    clock,
    close: () => (closing ??= deliveries.close().then(() => app.close())),
  };
}
