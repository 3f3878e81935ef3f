import { alertIdentity } from '@churn-risk/core';
import { createTestDelivery } from '@churn-risk/core/testing';
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkerd } from '../../packages/cloudflare/src/workerd.test-util.js';
import { bundleWorker, type WorkerBundle } from '../support/workerd-bundle.js';
import type { SpanJson } from './span-json.js';

// Tracing on Workers: the `tracer` option in workerd WITHOUT nodejs_compat, where the
// receiver cannot load @opentelemetry/api itself (no `process`, no `require`). The worker hands in
// a tracer of an SDK provider that is not registered globally; its spans are read back over HTTP.
const SECRET = 'whsec_workerd_tracing_5b1d';
const BASE = 'http://worker.test';
const CLIENT = 2; // SpanKind.CLIENT
const CONSUMER = 4; // SpanKind.CONSUMER
const ERROR = 2; // SpanStatusCode.ERROR

let worker: WorkerBundle;
let mf: Miniflare | undefined;

async function spans(): Promise<{ nodeProcess: string; spans: SpanJson[] }> {
  const response = (await mf!.dispatchFetch(`${BASE}/spans`)) as unknown as Response;
  return (await response.json()) as { nodeProcess: string; spans: SpanJson[] };
}

/** The finished spans whose `messaging.message.id` is `id`, once there are `count` of them. */
async function spansOf(id: string, count: number): Promise<SpanJson[]> {
  let found: SpanJson[] = [];
  await expect
    .poll(
      async () => {
        found = (await spans()).spans.filter((s) => s.attributes['messaging.message.id'] === id);
        return found.length;
      },
      { timeout: 20_000, interval: 50 },
    )
    .toBe(count);
  return found;
}

async function deliver(userId: string): Promise<{ id: string; status: number }> {
  const { headers, body, alert } = createTestDelivery({ userId }, { secret: SECRET });
  const response = (await mf!.dispatchFetch(`${BASE}/hooks`, {
    method: 'POST',
    headers,
    body,
  })) as unknown as Response;
  await response.text();
  return { id: alertIdentity(alert), status: response.status };
}

beforeAll(async () => {
  worker = await bundleWorker(new URL('./workerd-tracing-worker.ts', import.meta.url), {
    platform: 'browser', // the OpenTelemetry SDK picks its Web build by `browser` fields
  });
  ({ mf } = await startWorkerd(worker.code, { CHURN_RISK_WEBHOOK_SECRET: SECRET }));
});

afterAll(async () => {
  await mf?.dispose();
});

describe('the tracer option in workerd without nodejs_compat', () => {
  it('runs where no Node built-in exists: no node: import, no process', async () => {
    expect(worker.inputs.filter((input) => input.startsWith('node:'))).toEqual([]);
    expect(worker.code.match(/(?:\bfrom|\bimport|\brequire)\s*\(?\s*["']node:[^"']*/g)).toBeNull();
    expect((await spans()).nodeProcess).toBe('undefined');
    // `#otel` resolves to the Web file: no loader of @opentelemetry/api, no metrics.
    expect(worker.inputs.some((input) => input.endsWith('observability/otel-web.ts'))).toBe(true);
    expect(worker.inputs.some((input) => input.endsWith('observability/otel-node.ts'))).toBe(false);
  });

  it('records the receive span and a linked process span on the tracer handed in', async () => {
    const { id, status } = await deliver('user_traced');
    expect(status).toBe(202);
    const recorded = await spansOf(id, 2);
    const receive = recorded.find((s) => s.name === 'receive churn_risk_alert');
    const processed = recorded.find((s) => s.name === 'process churn_risk_alert');
    expect(receive).toMatchObject({
      kind: CLIENT,
      attributes: {
        'messaging.system': 'churn_risk',
        'messaging.operation.type': 'receive',
        'http.response.status_code': 202,
      },
    });
    expect(processed).toMatchObject({
      kind: CONSUMER,
      attributes: { 'messaging.operation.type': 'process', 'churn_risk.handler.attempt': 0 },
      links: [{ traceId: receive?.traceId, spanId: receive?.spanId }],
    });
    expect(processed?.parentSpanId).toBeUndefined(); // a root span, linked
    expect(processed?.status).not.toBe(ERROR);
  });

  it('records a failed try with its error', async () => {
    const { id, status } = await deliver('fail_user_traced');
    expect(status).toBe(202);
    const [processed] = (await spansOf(id, 2)).filter((s) => s.name === 'process churn_risk_alert');
    expect(processed?.status).toBe(ERROR);
    expect(processed?.attributes['error.type']).toBe('Error');
    expect(processed?.events.map((event) => event.name)).toEqual(['exception']);
  });

  it('records a refused delivery: the receive span with its code', async () => {
    const { headers, body } = createTestDelivery({ userId: 'user_forged' }, { secret: 'wrong' });
    const before = (await spans()).spans.length;
    const response = (await mf!.dispatchFetch(`${BASE}/hooks`, {
      method: 'POST',
      headers,
      body,
    })) as unknown as Response;
    expect(response.status).toBe(401);
    await response.text();
    await expect
      .poll(async () => (await spans()).spans.length, { timeout: 20_000 })
      .toBe(before + 1);
    const refused = (await spans()).spans.at(-1);
    expect(refused).toMatchObject({
      name: 'receive churn_risk_alert',
      status: ERROR,
      attributes: { 'http.response.status_code': 401, 'error.type': 'INVALID_SIGNATURE' },
    });
  });
});
