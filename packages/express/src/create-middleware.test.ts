import { createReceiver } from '@churn-risk/core';
import { RAW_BODY_MISSING, rawBodyMissingResult } from '@churn-risk/core/adapter';
import express, { type RequestHandler } from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createMiddleware, rawBodySaver } from './index.js';
import { createRecordingReceivers } from '../../../test/support/recording-receivers.js';
import { alertBodies, signedHeaders } from '../../../test/support/signed-alerts.js';
import { expectSecretError, NODE_HINT, UNSET_SECRETS } from '../../../test/support/secret-hint.js';

const SECRET = 'whsec_express_test_5b1d';
const alertBody = alertBodies('express');

const signed = (body: string, contentType?: string): Record<string, string> =>
  signedHeaders(body, SECRET, contentType);

const recorder = createRecordingReceivers(SECRET);

afterEach(() => recorder.closeAll());

function userIdOf(body: string): string {
  return (JSON.parse(body) as { userId: string }).userId;
}

describe('createMiddleware with body parsers', () => {
  const parsers: [string, RequestHandler | undefined, string][] = [
    ['no body parser', undefined, 'application/json'],
    ['express.raw()', express.raw({ type: '*/*' }), 'application/json'],
    ['express.text()', express.text({ type: '*/*' }), 'application/json'],
    [
      'express.json({ verify: rawBodySaver })',
      express.json({ verify: rawBodySaver }),
      'application/json',
    ],
    // express.json() leaves bodies of other content types unread: the middleware reads them.
    ['express.json() and a text/plain delivery', express.json(), 'text/plain'],
  ];
  for (const [label, parser, contentType] of parsers) {
    it(`verifies the raw bytes after ${label}`, async () => {
      const { receiver, seen } = recorder.create();
      const app = express();
      if (parser) app.use(parser);
      app.post('/webhooks/churn-risk', createMiddleware(receiver));
      // Indented JSON: re-serialising a parsed body would change the bytes and fail the signature.
      const body = alertBody(2);
      const response = await request(app)
        .post('/webhooks/churn-risk')
        .set(signed(body, contentType))
        .send(body);
      expect(response.status, response.text).toBe(202);
      await receiver.drain({ timeoutMs: 5000 });
      expect(seen).toEqual([userIdOf(body)]);
    });
  }

  it('answers 500 at once, naming the fix, after a global express.json() without rawBodySaver', async () => {
    const { receiver, seen } = recorder.create();
    const app = express();
    app.use(express.json());
    app.post('/webhooks/churn-risk', createMiddleware(receiver));
    const body = alertBody();
    const response = await request(app).post('/webhooks/churn-risk').set(signed(body)).send(body);
    expect(response.status).toBe(500);
    const { error } = response.body as { error: { code: string; message: string } };
    expect(error.code).toBe('RAW_BODY_MISSING');
    expect(error.code).toBe(RAW_BODY_MISSING);
    // The core's one message, ending with the Express fix.
    const shared = JSON.parse(rawBodyMissingResult('').body) as { error: { message: string } };
    expect(error.message.startsWith(shared.error.message.trim())).toBe(true);
    expect(error.message).toContain('before express.json()');
    expect(error.message).toContain('express.json({ verify: rawBodySaver })');
    expect(response.text).not.toContain(SECRET);
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual([]);
  });

  it('reads the stream when a parser left an empty object without reading (body-parser 1.x)', async () => {
    const { receiver, seen } = recorder.create();
    const app = express();
    app.use((req, _res, next) => {
      req.body = {};
      next();
    });
    app.post('/webhooks/churn-risk', createMiddleware(receiver));
    const body = alertBody();
    const response = await request(app).post('/webhooks/churn-risk').set(signed(body)).send(body);
    expect(response.status, response.text).toBe(202);
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual([userIdOf(body)]);
  });

  it('keeps JSON parsing of the app’s other routes with rawBodySaver', async () => {
    const { receiver } = recorder.create();
    const app = express();
    app.use(express.json({ verify: rawBodySaver }));
    app.post('/webhooks/churn-risk', createMiddleware(receiver));
    app.post('/api/notes', (req, res) => {
      res.json({ echoed: (req.body as { text: string }).text });
    });
    const response = await request(app).post('/api/notes').send({ text: 'hello' });
    expect(response.body).toEqual({ echoed: 'hello' });
  });
});

describe('createMiddleware mounting', () => {
  it('works on a Router under a mount path', async () => {
    const { receiver, seen } = recorder.create();
    const router = express.Router();
    router.post('/churn-risk', createMiddleware(receiver));
    const app = express();
    app.use('/webhooks', router);
    const body = alertBody();
    const response = await request(app).post('/webhooks/churn-risk').set(signed(body)).send(body);
    expect(response.status).toBe(202);
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual([userIdOf(body)]);
  });

  it('answers other methods 405 when mounted with app.use(path)', async () => {
    const { receiver } = recorder.create();
    const app = express();
    app.use('/hooks/churn', createMiddleware(receiver));
    const get = await request(app).get('/hooks/churn');
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    const body = alertBody();
    const post = await request(app).post('/hooks/churn').set(signed(body)).send(body);
    expect(post.status).toBe(202);
  });
});

describe('a receiver made with an unset secret', () => {
  it.each(UNSET_SECRETS)(
    '%s: createReceiver throws a TypeError naming CHURN_RISK_WEBHOOK_SECRET and the process environment',
    (_name, secret) => {
      const env: Record<string, unknown> = { CHURN_RISK_WEBHOOK_SECRET: secret };
      expectSecretError(() => {
        const app = express();
        app.post(
          '/webhooks/churn-risk',
          createMiddleware(createReceiver({ secret: env.CHURN_RISK_WEBHOOK_SECRET as string })),
        );
      }, NODE_HINT);
    },
  );
});
