import { ServiceError } from '@churn-risk/core';
import { codeForStatus } from '@churn-risk/core/wire';
import type { DashboardState } from '../dashboard/dashboard-state.js';
import type { DeliveryFilter } from '../deliveries/delivery-filter.js';
import type { DeliveryRecord } from '../deliveries/delivery-record.js';
import type { ClockState } from '../routes/clock-route.js';

const parseJson = (text: string): unknown => {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** Options of `SandboxClient`. */
export interface SandboxClientOptions {
  /** The sandbox's URL, e.g. `http://127.0.0.1:4010`. */
  baseUrl: string;
  /** The sandbox's API key. */
  apiKey: string;
  /** Time-out of each call, ms. Default 10,000. */
  timeoutMs?: number;
  /** The `fetch` to use; default the global one. */
  fetch?: typeof fetch;
}

/**
 * A typed client of the sandbox's developer routes, for scripts and tests; the
 * REST API's routes are `ChurnRiskClient`'s. No retries: a failed call rejects at once with
 * a `ServiceError` (`code`, `status`, `requestId`), whose message never holds the API key.
 *
 * @example
 * const sandbox = new SandboxClient({ baseUrl: 'http://127.0.0.1:4010', apiKey });
 * const failed = await sandbox.listDeliveries({ status: 'failed' });
 * for (const delivery of failed) await sandbox.replay(delivery.id);
 */
export class SandboxClient {
  readonly #options: SandboxClientOptions;

  constructor(options: SandboxClientOptions) {
    if (!URL.canParse(options.baseUrl))
      throw new TypeError('SandboxClient: baseUrl must be an absolute URL.');
    if (typeof options.apiKey !== 'string' || options.apiKey === '')
      throw new TypeError('SandboxClient: apiKey must be a non-empty string.');
    this.#options = options;
  }

  /** `GET /v1/deliveries?status=&userId=`: the delivery log, oldest first. */
  async listDeliveries(filter: DeliveryFilter = {}): Promise<DeliveryRecord[]> {
    const query = new URLSearchParams();
    if (filter.status !== undefined) query.set('status', filter.status);
    if (filter.userId !== undefined) query.set('userId', filter.userId);
    const suffix = query.size > 0 ? `?${query.toString()}` : '';
    const body = await this.#call<{ deliveries: DeliveryRecord[] }>(
      'GET',
      `/v1/deliveries${suffix}`,
    );
    return body.deliveries;
  }

  /** `POST /v1/deliveries/{id}/replay`: the new delivery (same payload and webhook, signed afresh). */
  replay(deliveryId: string): Promise<DeliveryRecord> {
    return this.#call('POST', `/v1/deliveries/${encodeURIComponent(deliveryId)}/replay`, {});
  }

  /** `POST /v1/sandbox/test-alert`: a test alert from the user's current risk to its watch's webhook. */
  sendTestAlert(userId: string): Promise<DeliveryRecord> {
    return this.#call('POST', '/v1/sandbox/test-alert', { userId });
  }

  /** `GET /v1/sandbox/clock`: the clock's mode and time. */
  getClock(): Promise<ClockState> {
    return this.#call('GET', '/v1/sandbox/clock');
  }

  /** `POST /v1/sandbox/clock`: moves a manual clock forward (`CONFLICT`, 409, on the system clock). */
  advanceClock(ms: number): Promise<ClockState> {
    return this.#call('POST', '/v1/sandbox/clock', { advanceMs: ms });
  }

  /** `GET /v1/sandbox/state`: everything the dashboard shows. */
  getState(): Promise<DashboardState> {
    return this.#call('GET', '/v1/sandbox/state');
  }

  async #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const { baseUrl, apiKey } = this.#options;
    const doFetch = this.#options.fetch ?? fetch;
    let response: Response;
    try {
      response = await doFetch(new URL(path, baseUrl), {
        method,
        headers: {
          authorization: `Bearer ${apiKey}`,
          accept: 'application/json',
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        signal: AbortSignal.timeout(this.#options.timeoutMs ?? 10_000),
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
    } catch (cause) {
      const timedOut = cause instanceof Error && cause.name === 'TimeoutError';
      const code = timedOut ? 'TIMEOUT' : 'NETWORK_ERROR';
      throw new ServiceError({ code, message: `${method} ${path} failed: ${code}`, cause });
    }
    const text = await response.text();
    const parsed = parseJson(text);
    if (response.ok) return parsed as T;
    const error = (
      parsed as { error?: { code?: string; message?: string; details?: unknown[] } } | undefined
    )?.error;
    throw new ServiceError({
      code: error?.code ?? codeForStatus(response.status),
      message: error?.message ?? `HTTP ${response.status}`,
      status: response.status,
      requestId: response.headers.get('x-request-id') ?? undefined,
      details: error?.details,
    });
  }
}
