import { createReceiver, type Receiver } from '@churn-risk/core';
import { signPayload } from '@churn-risk/core/testing';
import Fastify, { type FastifyInstance } from 'fastify';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import defaultExport, { churnRiskPlugin } from './index.js';
import {
  createRecordingReceivers,
  type RecordingReceivers,
} from '../../../test/support/recording-receivers.js';
import { expectSecretError, NODE_HINT, UNSET_SECRETS } from '../../../test/support/secret-hint.js';

const SECRET = 'whsec_fastify_test_8e2a';
let sequence = 0;

function alertBody(extra: Record<string, unknown> = {}): string {
  sequence += 1;
  return JSON.stringify({
    event: 'churn_risk_alert',
    userId: `fastify_user_${sequence}`,
    score: 0.75,
    tier: 'high',
    signals: ['payment_failed'],
    recommendation: 'Fix the card.',
    triggeredAt: new Date(Date.UTC(2026, 0, 1) + sequence * 1000).toISOString(),
    ...extra,
  });
}

function signed(body: string, contentType?: string): Record<string, string> {
  const { signature, timestamp } = signPayload({ body, secret: SECRET });
  return {
    ...(contentType === undefined ? {} : { 'content-type': contentType }),
    'x-service-signature': signature,
    'x-service-timestamp': timestamp,
  };
}

const apps: FastifyInstance[] = [];
const recorder = createRecordingReceivers(SECRET);

afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
  await recorder.closeAll();
});

const recordingReceiver = (maxBodyBytes?: number): ReturnType<RecordingReceivers['create']> =>
  recorder.create(maxBodyBytes);

/** An app with its own JSON route next to the webhook plugin. */
async function appWith(
  receiver: Receiver,
  options: { prefix?: string; path?: string; bodyLimit?: number } = {},
): Promise<FastifyInstance> {
  const app = Fastify(options.bodyLimit === undefined ? {} : { bodyLimit: options.bodyLimit });
  apps.push(app);
  app.post('/api/notes', async (request) => ({ body: request.body }));
  await app.register(churnRiskPlugin, {
    receiver,
    path: options.path ?? '/webhooks/churn-risk',
    ...(options.prefix === undefined ? {} : { prefix: options.prefix }),
  });
  await app.ready();
  return app;
}

function userIdOf(body: string): string {
  return (JSON.parse(body) as { userId: string }).userId;
}

describe('churnRiskPlugin', () => {
  it('is also the default export', () => {
    expect(defaultExport).toBe(churnRiskPlugin);
  });

  it('verifies the raw bytes whatever the content type, or none', async () => {
    const { receiver, seen } = recordingReceiver();
    const app = await appWith(receiver);
    const sent: string[] = [];
    for (const contentType of [
      'application/json',
      'text/plain',
      'application/octet-stream',
      undefined,
      // Values Fastify itself cannot parse (it would answer 415): the bytes are still verified.
      'garbage',
      '',
      'a/b/c',
    ]) {
      // Indented JSON: a parsed and re-serialised body would not match the signature.
      const body = JSON.stringify(JSON.parse(alertBody()), null, 2);
      sent.push(userIdOf(body));
      const response = await app.inject({
        method: 'POST',
        url: '/webhooks/churn-risk',
        headers: signed(body, contentType),
        payload: body,
      });
      expect(response.statusCode, `${String(contentType)}: ${response.body}`).toBe(202);
    }
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen.sort()).toEqual(sent.sort());
  });

  it('keeps the app’s own JSON parsing and content types for its other routes', async () => {
    const { receiver } = recordingReceiver();
    const app = await appWith(receiver);
    const json = await app.inject({ method: 'POST', url: '/api/notes', payload: { text: 'hi' } });
    expect(json.json()).toEqual({ body: { text: 'hi' } });
    // The plugin's catch-all parser does not leak: the app still refuses an unknown type.
    const binary = await app.inject({
      method: 'POST',
      url: '/api/notes',
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.from('abc'),
    });
    expect(binary.statusCode).toBe(415);
  });

  it('honours the register prefix', async () => {
    const { receiver, seen } = recordingReceiver();
    const app = await appWith(receiver, { prefix: '/hooks', path: '/churn' });
    const body = alertBody();
    const missing = await app.inject({
      method: 'POST',
      url: '/churn',
      headers: signed(body, 'application/json'),
      payload: body,
    });
    expect(missing.statusCode).toBe(404);
    const response = await app.inject({
      method: 'POST',
      url: '/hooks/churn',
      headers: signed(body, 'application/json'),
      payload: body,
    });
    expect(response.statusCode).toBe(202);
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual([userIdOf(body)]);
  });

  it('can be registered twice, for two receivers at two paths', async () => {
    const first = recordingReceiver();
    const second = recordingReceiver();
    const app = Fastify();
    apps.push(app);
    await app.register(churnRiskPlugin, { receiver: first.receiver, path: '/a' });
    await app.register(churnRiskPlugin, { receiver: second.receiver, path: '/b' });
    const body = alertBody();
    for (const url of ['/a', '/b']) {
      const response = await app.inject({
        method: 'POST',
        url,
        headers: signed(body, 'application/json'),
        payload: body,
      });
      expect(response.statusCode).toBe(202);
    }
    await Promise.all([first.receiver.drain(), second.receiver.drain()]);
    expect([first.seen, second.seen]).toEqual([[userIdOf(body)], [userIdOf(body)]]);
  });

  it('uses the receiver’s body limit, not the app’s, and answers 413 with the receiver’s body', async () => {
    const { receiver, seen } = recordingReceiver(1024);
    const rejected: { status: number; code: string }[] = [];
    receiver.onRejected(({ status, code }) => {
      rejected.push({ status, code });
    });
    const app = await appWith(receiver, { bodyLimit: 64 });
    const body = alertBody({ note: 'y'.repeat(300) }); // over the app's 64, within the receiver's 1024
    const ok = await app.inject({
      method: 'POST',
      url: '/webhooks/churn-risk',
      headers: signed(body, 'application/json'),
      payload: body,
    });
    expect(ok.statusCode).toBe(202);
    const tooBig = alertBody({ note: 'z'.repeat(2000) });
    const refused = await app.inject({
      method: 'POST',
      url: '/webhooks/churn-risk',
      headers: signed(tooBig, 'application/json'),
      payload: tooBig,
    });
    expect(refused.statusCode).toBe(413);
    expect(refused.json()).toMatchObject({ error: { code: 'PAYLOAD_TOO_LARGE' } });
    expect(refused.body).toContain('1024 bytes');
    // Refused while Fastify read the body, and still reported like any refused delivery.
    expect(rejected).toEqual([{ status: 413, code: 'PAYLOAD_TOO_LARGE' }]);
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual([userIdOf(body)]);
  });

  it('answers 413 to a chunked body over the limit on a real socket', async () => {
    const { receiver } = recordingReceiver(512);
    const app = await appWith(receiver);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const body = alertBody({ padding: 'p'.repeat(4000) });
    const response = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const outgoing = httpRequest(
        `http://127.0.0.1:${port}/webhooks/churn-risk`,
        { method: 'POST', headers: signed(body, 'application/json'), agent: false },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      outgoing.on('error', reject);
      for (const chunk of body.match(/[\s\S]{1,300}/g) ?? []) outgoing.write(chunk);
      outgoing.end();
    });
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body)).toMatchObject({ error: { code: 'PAYLOAD_TOO_LARGE' } });
  });

  it('drains the receiver when the app closes', async () => {
    const { receiver } = recordingReceiver();
    const events: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    receiver.on('churn_risk_alert', async () => {
      started();
      await held;
      events.push('handler finished');
    });
    const app = Fastify();
    await app.register(churnRiskPlugin, { receiver, path: '/webhooks/churn-risk' });
    const body = alertBody();
    const response = await app.inject({
      method: 'POST',
      url: '/webhooks/churn-risk',
      headers: signed(body, 'application/json'),
      payload: body,
    });
    expect(response.statusCode).toBe(202);
    await running;
    // Observe the plugin's onClose hook calling drain, then let the handler finish.
    const drain = receiver.drain.bind(receiver);
    let drainCalled!: () => void;
    const draining = new Promise<void>((resolve) => (drainCalled = resolve));
    receiver.drain = (options) => {
      events.push('drain called');
      drainCalled();
      return drain(options);
    };
    const closed = app.close().then(() => events.push('app closed'));
    await Promise.race([draining, closed]);
    events.push('releasing');
    release();
    await closed;
    expect(events).toEqual(['drain called', 'releasing', 'handler finished', 'app closed']);
  });

  it('refuses an unknown option key, naming the closest known one; Fastify’s register options pass', async () => {
    const { receiver } = recordingReceiver();
    const app = Fastify();
    apps.push(app);
    const options = { receiver, path: '/webhooks/churn-risk', drainTimeout: 1_000 };
    await expect(app.register(churnRiskPlugin, options as never)).rejects.toThrow(
      /^churnRiskPlugin does not know the option "drainTimeout" \(did you mean drainTimeoutMs\?\)/,
    );
    const other = Fastify();
    apps.push(other);
    await other.register(churnRiskPlugin, {
      receiver,
      path: '/churn-risk',
      prefix: '/webhooks',
      logLevel: 'warn',
      logSerializers: {},
    });
    const body = alertBody();
    const response = await other.inject({
      method: 'POST',
      url: '/webhooks/churn-risk',
      headers: signed(body, 'application/json'),
      payload: body,
    });
    expect(response.statusCode).toBe(202);
  });
});

describe('a receiver made with an unset secret', () => {
  it.each(UNSET_SECRETS)(
    '%s: createReceiver throws a TypeError naming CHURN_RISK_WEBHOOK_SECRET and the process environment',
    async (_name, secret) => {
      const env: Record<string, unknown> = { CHURN_RISK_WEBHOOK_SECRET: secret };
      const app = Fastify();
      expectSecretError(() => {
        void app.register(churnRiskPlugin, {
          receiver: createReceiver({ secret: env.CHURN_RISK_WEBHOOK_SECRET as string }),
          path: '/webhooks/churn-risk',
        });
      }, NODE_HINT);
      await app.close();
    },
  );
});
