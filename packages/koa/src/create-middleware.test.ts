import { createReceiver } from '@churn-risk/core';
import { RAW_BODY_MISSING, rawBodyMissingResult } from '@churn-risk/core/adapter';
import { bodyParser as koaBodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import bodyParser from 'koa-bodyparser';
import { createServer, type Server } from 'node:http';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createMiddleware } from './index.js';
import { createRecordingReceivers } from '../../../test/support/recording-receivers.js';
import { alertBodies, signedHeaders } from '../../../test/support/signed-alerts.js';
import { expectSecretError, NODE_HINT, UNSET_SECRETS } from '../../../test/support/secret-hint.js';

const SECRET = 'whsec_koa_test_71d3';
const PATH = '/webhooks/churn-risk';
const alertBody = alertBodies('koa');

const signed = (body: string, contentType?: string): Record<string, string> =>
  signedHeaders(body, SECRET, contentType);

const userIdOf = (body: string): string => (JSON.parse(body) as { userId: string }).userId;

interface ErrorBody {
  error: { code: string; message: string };
}

const recorder = createRecordingReceivers(SECRET);

afterEach(() => recorder.closeAll());

/** A Koa app with `before` (a body parser) in front of a router that mounts the middleware. */
function appWith(
  receiver: Parameters<typeof createMiddleware>[0],
  before: Middleware[] = [],
): { app: Koa; errors: unknown[] } {
  const app = new Koa();
  const errors: unknown[] = [];
  app.on('error', (error: unknown) => errors.push(error)); // the middleware never throws
  for (const middleware of before) app.use(middleware);
  const router = new Router();
  router.all(PATH, createMiddleware(receiver));
  app.use(router.routes());
  return { app, errors };
}

function serverOf(app: Koa): Server {
  const callback = app.callback();
  return createServer((req, res) => void callback(req, res));
}

/** Records what a body parser left on `ctx.request`. */
function spy(kept: unknown[]): Middleware {
  return async (ctx, next) => {
    kept.push((ctx.request as { rawBody?: unknown }).rawBody);
    await next();
  };
}

describe('createMiddleware with body parsers', () => {
  const cases: [string, () => Middleware, string, 'string' | 'undefined'][] = [
    ['no body parser', () => async (_ctx, next) => next(), 'application/json', 'undefined'],
    ['koa-bodyparser', () => bodyParser(), 'application/json', 'string'],
    ['@koa/bodyparser', () => koaBodyParser(), 'application/json', 'string'],
    [
      "koa-bodyparser's text parser",
      () => bodyParser({ enableTypes: ['json', 'text'] }),
      'text/plain',
      'string',
    ],
    // A content type the parser does not take: the body reaches the middleware unread.
    [
      'koa-bodyparser and an octet-stream delivery',
      () => bodyParser(),
      'application/octet-stream',
      'undefined',
    ],
    ['@koa/bodyparser and a text/plain delivery', () => koaBodyParser(), 'text/plain', 'undefined'],
  ];
  for (const [label, parser, contentType, rawBodyType] of cases) {
    it(`verifies the raw bytes after ${label}`, async () => {
      const { receiver, seen } = recorder.create();
      const kept: unknown[] = [];
      const { app, errors } = appWith(receiver, [parser(), spy(kept)]);
      // Indented JSON and non-ASCII text: a re-serialised body would fail the signature.
      const body = alertBody(2, { note: 'café ✓' });
      const response = await request(serverOf(app))
        .post(PATH)
        .set(signed(body, contentType))
        .send(body);
      expect(response.status, response.text).toBe(202);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(response.text)).toEqual({ received: true });
      expect(kept.map((value) => typeof value)).toEqual([rawBodyType]);
      await receiver.drain({ timeoutMs: 5000 });
      expect(seen).toEqual([userIdOf(body)]);
      expect(errors).toEqual([]);
    });
  }

  it('answers 500 RAW_BODY_MISSING naming the fix after a parser that kept no raw body', async () => {
    const { receiver, seen } = recorder.create();
    const rejected: string[] = [];
    receiver.onRejected(({ code }) => void rejected.push(code));
    const consume: Middleware = async (ctx, next) => {
      const chunks: Buffer[] = [];
      for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
      (ctx.request as { body?: unknown }).body = JSON.parse(Buffer.concat(chunks).toString());
      await next();
    };
    const { app } = appWith(receiver, [consume]);
    const body = alertBody();
    const response = await request(serverOf(app)).post(PATH).set(signed(body)).send(body);
    expect(response.status).toBe(500);
    const { error } = JSON.parse(response.text) as ErrorBody;
    expect(error.code).toBe(RAW_BODY_MISSING);
    const shared = JSON.parse(rawBodyMissingResult('').body) as ErrorBody;
    expect(error.message.startsWith(shared.error.message.trim())).toBe(true);
    expect(error.message).toContain('before the body parser');
    expect(error.message).toContain('ctx.request.rawBody');
    expect(response.text).not.toContain(SECRET);
    expect(rejected).toEqual([RAW_BODY_MISSING]); // through receiver.refuse: logged and reported
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual([]);
  });

  it("keeps the app's other routes parsing JSON", async () => {
    const { receiver } = recorder.create();
    const { app } = appWith(receiver, [bodyParser()]);
    const router = new Router();
    router.post('/api/notes', (ctx) => {
      ctx.body = { echoed: (ctx.request.body as { text: string }).text };
    });
    app.use(router.routes());
    const response = await request(serverOf(app)).post('/api/notes').send({ text: 'hello' });
    expect(response.body).toEqual({ echoed: 'hello' });
  });
});

// What the status table asks of every adapter (405, 503 CLOSED, 413) is checked once for Koa by the
// conformance suite, and reading the body by core's Node request path; here, what Koa writes.
describe('createMiddleware answers through ctx', () => {
  it('writes the receiver’s headers: 413 with Connection: close, and nothing reaches app.on("error")', async () => {
    const { receiver, seen } = recorder.create(512);
    const { app, errors } = appWith(receiver);
    const body = alertBody(0, { padding: 'x'.repeat(4000) });
    const response = await request(serverOf(app)).post(PATH).set(signed(body)).send(body);
    expect(response.status).toBe(413);
    expect(response.headers.connection).toBe('close');
    expect((JSON.parse(response.text) as ErrorBody).error.code).toBe('PAYLOAD_TOO_LARGE');
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual([]);
    expect(errors).toEqual([]);
  });
});

describe('a receiver made with an unset secret', () => {
  it.each(UNSET_SECRETS)(
    '%s: createReceiver throws a TypeError naming CHURN_RISK_WEBHOOK_SECRET and the process environment',
    (_name, secret) => {
      const env: Record<string, unknown> = { CHURN_RISK_WEBHOOK_SECRET: secret };
      expectSecretError(() => {
        const router = new Router();
        router.post(
          PATH,
          createMiddleware(createReceiver({ secret: env.CHURN_RISK_WEBHOOK_SECRET as string })),
        );
        new Koa().use(router.routes());
      }, NODE_HINT);
    },
  );
});
