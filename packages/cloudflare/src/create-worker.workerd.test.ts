import { createTestDelivery, signPayload } from '@churn-risk/core/testing';
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bundleWorker,
  startRecorder,
  startWorkerd,
  type Recorder,
  type WorkerBundle,
} from './workerd.test-util.js';

// The real worker in workerd (miniflare 4, no nodejs_compat), bundled from the workspace sources
// with wrangler's export conditions. Its handler reports to a node:http recorder over fetch.
const SECRET = 'whsec_workerd_6c2a';
const URL_PATH = 'http://worker.test/webhooks/churn-risk';

let bundle: WorkerBundle;
let recorder: Recorder;
let mf: Miniflare | undefined;
let sequence = 0;

function signed(userId = `user_wd_${++sequence}`): {
  headers: Record<string, string>;
  body: string;
  userId: string;
} {
  const triggeredAt = new Date(Date.now() - ++sequence * 1000).toISOString();
  return { ...createTestDelivery({ userId, triggeredAt }, { secret: SECRET }), userId };
}

async function post(headers: Record<string, string>, body: string): Promise<Response> {
  if (mf === undefined) throw new Error('workerd is not running');
  return (await mf.dispatchFetch(URL_PATH, {
    method: 'POST',
    headers,
    body,
  })) as unknown as Response;
}

async function errorCode(response: Response): Promise<string> {
  return ((await response.json()) as { error: { code: string } }).error.code;
}

beforeAll(async () => {
  recorder = await startRecorder();
  bundle = await bundleWorker(new URL('./worker-fixture.test-util.ts', import.meta.url));
  ({ mf } = await startWorkerd(bundle.code, {
    CHURN_RISK_WEBHOOK_SECRET: SECRET,
    RECORDER_URL: recorder.url,
  }));
});

afterAll(async () => {
  await mf?.dispose();
  await recorder.close();
});

describe('createWorker in workerd without nodejs_compat', () => {
  it('bundles with no node: module and verifies with WebCrypto alone', () => {
    expect(bundle.inputs.filter((input) => input.startsWith('node:'))).toEqual([]);
    // No import or require of a node: module (otel-api's getBuiltinModule('node:module') is a
    // guarded call that finds no `process` in workerd, not an import).
    expect(bundle.code.match(/(?:\bfrom|\bimport|\brequire)\s*\(?\s*["']node:[^"']*/g)).toBeNull();
    expect(bundle.inputs.some((input) => input.endsWith('signature/hmac-node.ts'))).toBe(false);
    // `#receiver-verifier` resolves to the workerd file: WebCrypto alone, no @noble/hashes.
    expect(
      bundle.inputs.some((input) => input.endsWith('signature/receiver-verifier-workerd.ts')),
    ).toBe(true);
    expect(bundle.included.filter((input) => input.includes('@noble/hashes'))).toEqual([]);
    // `#node-request` resolves to the Web file: receiver.node holds no Node request path here.
    expect(bundle.inputs.some((input) => input.endsWith('receiver/node-request-node.ts'))).toBe(
      false,
    );
    expect(bundle.inputs.some((input) => input.endsWith('receiver/node-request-web.ts'))).toBe(
      true,
    );
  });

  it('answers 202, runs the handler after the answer, and keeps it alive with ctx.waitUntil', async () => {
    const { headers, body } = signed('gated_user_1');
    const response = await post(headers, body);
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ received: true });
    // The answer is out; the handler is still running: it started and waits at the gate.
    await recorder.waitFor('/started');
    await expect.poll(() => recorder.held, { timeout: 20_000 }).toBe(1);
    expect(recorder.reports.filter((r) => r.path === '/done')).toEqual([]);
    recorder.open();
    const [done] = await recorder.waitFor('/done');
    expect(done?.body.userId).toBe('gated_user_1');
  });

  it('runs every alert of concurrent deliveries, each in the request that accepted it', async () => {
    // Quick and slow handlers side by side: in workerd, an alert run from another request's
    // timer or slot is cancelled when that request ends (the quick ones end first).
    const users = Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? `quick_${i}` : `slow_${i}`));
    const before = recorder.reports.filter((r) => r.path === '/done').length;
    const answers = await Promise.all(
      users.map(async (userId) => {
        const { headers, body } = signed(userId);
        const response = await post(headers, body);
        await response.text();
        return response.status;
      }),
    );
    expect(answers).toEqual(users.map(() => 202));
    const done = await recorder.waitFor('/done', before + users.length);
    expect(done.map((r) => r.body.userId)).toEqual(expect.arrayContaining(users));
  });

  it('answers a redelivery 202 duplicate and does not run the handler again', async () => {
    const { headers, body, userId } = signed();
    const reportsOf = (path: string): unknown[] =>
      recorder.reports.filter((r) => r.path === path && r.body.userId === userId);
    expect((await post(headers, body)).status).toBe(202);
    const duplicate = await post(headers, body);
    expect(duplicate.status).toBe(202);
    expect(await duplicate.json()).toEqual({ received: true, duplicate: true });
    // The first delivery's handler finishes; then another alert runs its handler through the
    // same isolate, so a handler run for the duplicate would have started by then.
    await expect.poll(() => reportsOf('/done'), { timeout: 20_000 }).toHaveLength(1);
    const next = signed();
    expect((await post(next.headers, next.body)).status).toBe(202);
    await expect
      .poll(() =>
        recorder.reports.filter((r) => r.path === '/done' && r.body.userId === next.userId),
      )
      .toHaveLength(1);
    expect(reportsOf('/started')).toHaveLength(1);
  });

  it.each([
    ['MISSING_SIGNATURE', (h: Record<string, string>) => delete h['x-service-signature']],
    ['MISSING_TIMESTAMP', (h: Record<string, string>) => delete h['x-service-timestamp']],
    ['INVALID_TIMESTAMP', (h: Record<string, string>) => (h['x-service-timestamp'] = '12a')],
    [
      'INVALID_SIGNATURE',
      (h: Record<string, string>) => (h['x-service-signature'] = `sha256=${'0'.repeat(64)}`),
    ],
  ])('answers 401 %s', async (code, change) => {
    const { headers, body } = signed();
    change(headers);
    const response = await post(headers, body);
    expect(response.status).toBe(401);
    expect(await errorCode(response)).toBe(code);
  });

  it('answers 401 TIMESTAMP_OUT_OF_TOLERANCE', async () => {
    const { body } = signed();
    const old = signPayload({ body, secret: SECRET, timestamp: Date.now() / 1000 - 3600 });
    const response = await post(
      { 'x-service-signature': old.signature, 'x-service-timestamp': old.timestamp },
      body,
    );
    expect(response.status).toBe(401);
    expect(await errorCode(response)).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
  });

  it.each([
    ['not JSON', 'not json'],
    ['not a valid alert', JSON.stringify({ event: 'churn_risk_alert', userId: '' })],
  ])('answers 400 INVALID_PAYLOAD for a verified body that is %s', async (_case, body) => {
    const { signature, timestamp } = signPayload({ body, secret: SECRET });
    const response = await post(
      { 'x-service-signature': signature, 'x-service-timestamp': timestamp },
      body,
    );
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe('INVALID_PAYLOAD');
  });

  it('answers 405 with Allow: POST', async () => {
    const response = (await mf!.dispatchFetch(URL_PATH)) as unknown as Response;
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(await errorCode(response)).toBe('METHOD_NOT_ALLOWED');
  });

  it('answers 413 over maxBodyBytes', async () => {
    const body = JSON.stringify({ event: 'churn_risk_alert', pad: 'x'.repeat(5000) });
    const { signature, timestamp } = signPayload({ body, secret: SECRET });
    const response = await post(
      { 'x-service-signature': signature, 'x-service-timestamp': timestamp },
      body,
    );
    expect(response.status).toBe(413);
    expect(await errorCode(response)).toBe('PAYLOAD_TOO_LARGE');
  });

  it('without the secret binding: 500 naming it, and 202 once it is set', async () => {
    const bare = await startWorkerd(bundle.code, { RECORDER_URL: recorder.url });
    try {
      const { headers, body } = signed();
      const response = (await bare.mf.dispatchFetch(URL_PATH, {
        method: 'POST',
        headers,
        body,
      })) as unknown as Response;
      expect(response.status).toBe(500);
      const { error } = (await response.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('INTERNAL_ERROR');
      expect(error.message).toContain('wrangler secret put CHURN_RISK_WEBHOOK_SECRET');
      await bare.mf.setOptions({
        modules: true,
        script: bundle.code,
        compatibilityDate: '2025-09-01',
        compatibilityFlags: [],
        bindings: { CHURN_RISK_WEBHOOK_SECRET: SECRET, RECORDER_URL: recorder.url },
      });
      const retried = (await bare.mf.dispatchFetch(URL_PATH, {
        method: 'POST',
        headers,
        body,
      })) as unknown as Response;
      expect(retried.status).toBe(202);
    } finally {
      await bare.mf.dispose();
    }
  });
});
