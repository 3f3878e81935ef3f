import autocannon, { type Result } from 'autocannon';
import { alertBody, signHeaders, WEBHOOK_PATH } from './alert.js';

export interface LoadOptions {
  connections: number;
  /** Seconds of load; or `amount`, a number of requests. */
  duration?: number;
  amount?: number;
  /** The request path; `WEBHOOK_PATH` by default. */
  path?: string;
  /** The signature headers for a body; `signHeaders` by default. */
  sign?: (body: string) => Record<string, string>;
}

export interface LoadResult {
  requestsPerSecond: number;
  latencyP50: number;
  latencyP99: number;
  latencyMax: number;
  total: number;
  /** Answers by status code, and transport errors/time-outs: all must be the expected status. */
  statuses: Record<string, number>;
  errors: number;
}

/**
 * Drives a server with autocannon, every request a fresh alert (new userId and triggeredAt, so the
 * receiver's dedupe never short-circuits) signed at the moment it is sent.
 */
export async function signedLoad(port: number, options: LoadOptions): Promise<LoadResult> {
  const sign = options.sign ?? signHeaders;
  const result: Result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: options.connections,
    ...(options.amount === undefined
      ? { duration: options.duration ?? 5 }
      : { amount: options.amount }),
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path: options.path ?? WEBHOOK_PATH,
        setupRequest: (request) => {
          const body = alertBody();
          return {
            ...request,
            body,
            headers: { 'content-type': 'application/json', ...sign(body) },
          };
        },
      },
    ],
  });
  const statuses: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statuses[code] = count;
  return {
    requestsPerSecond: result.duration > 0 ? result.requests.total / result.duration : 0,
    latencyP50: result.latency.p50,
    latencyP99: result.latency.p99,
    latencyMax: result.latency.max,
    total: result.requests.total,
    statuses,
    errors: result.errors + result.timeouts,
  };
}

/** "202: 1234" etc., for tables. */
export function statusSummary(statuses: Record<string, number>, errors: number): string {
  const parts = Object.entries(statuses).map(([code, n]) => `${code}: ${n}`);
  if (errors > 0) parts.push(`errors: ${errors}`);
  return parts.join(', ') || 'none';
}
