import { createReceiver, IntegrationError, type Receiver } from '@churn-risk/core';
import { createDurableQueue, createMemoryStore } from '@churn-risk/core/store';
import { RAW_BODY_MISSING, rawBodyMissingResult } from '@churn-risk/core/adapter';
import { serve, type ServerType } from '@hono/node-server';
import { Hono, type Context, type ExecutionContext, type MiddlewareHandler } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { createHandler } from './index.js';
import { postChunked } from '../../../test/support/raw-posts.js';
import { alertBodies, signedHeaders } from '../../../test/support/signed-alerts.js';
import { createRecordingReceivers } from '../../../test/support/recording-receivers.js';

const SECRET = 'whsec_hono_test_8c2e';
const PATH = '/webhooks/churn-risk';
const alertBody = alertBodies('hono');

const signed = (body: string, secret = SECRET): Record<string, string> =>
  signedHeaders(body, secret);

function post(body: string, headers: Record<string, string> = signed(body)): Request {
  return new Request(`http://localhost${PATH}`, { method: 'POST', headers, body });
}

/** A middleware that reads the body with `read`, then goes on. */
const readingWith =
  (read: (c: Context) => unknown): MiddlewareHandler =>
  async (c, next) => {
    await read(c);
    await next();
  };

const userIdOf = (body: string): string => (JSON.parse(body) as { userId: string }).userId;

interface ErrorBody {
  error: { code: string; message: string };
}

const recorder = createRecordingReceivers(SECRET);
const servers: ServerType[] = [];
const extraReceivers: Receiver[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    if ('closeAllConnections' in server) server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await recorder.closeAll();
  await Promise.all(extraReceivers.splice(0).map((r) => r.close({ timeoutMs: 5000 })));
});

function appWith(receiver: Receiver, before?: MiddlewareHandler): Hono {
  const app = new Hono();
  if (before) app.use(PATH, before);
  app.all(PATH, createHandler(receiver));
  return app;
}

describe('createHandler', () => {
  it('refuses an unknown option key, naming the closest known one', () => {
    const { receiver } = recorder.create();
    expect(() => createHandler(receiver, { waitUnitl: () => undefined } as never)).toThrow(
      new TypeError(
        'createHandler does not know the option "waitUnitl" (did you mean waitUntil?). ' +
          'Known options: waitUntil.',
      ),
    );
  });

  it('answers a signed alert 202 from c.req.raw and runs the handler', async () => {
    const { receiver, seen } = recorder.create();
    const body = alertBody();
    const response = await appWith(receiver).request(post(body));
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ received: true });
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual([userIdOf(body)]);
  });

  it('reads a body with a Content-Length within the limit, and one without', async () => {
    const { receiver, seen } = recorder.create();
    const app = appWith(receiver);
    const framed = alertBody(2);
    const withLength = post(framed, {
      ...signed(framed),
      'content-length': String(Buffer.byteLength(framed)),
    });
    expect((await app.request(withLength)).status).toBe(202);
    const streamed = alertBody(2);
    const stream = new Request(`http://localhost${PATH}`, {
      method: 'POST',
      headers: signed(streamed),
      body: new Blob([streamed]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect((await app.request(stream)).status).toBe(202);
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual([userIdOf(framed), userIdOf(streamed)]);
  });

  it('answers other methods 405 with Allow: POST when mounted with app.all', async () => {
    const { receiver } = recorder.create();
    const response = await appWith(receiver).request(PATH, { method: 'GET' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('refuses a bad signature 401 without leaking the secret', async () => {
    const { receiver, seen } = recorder.create();
    const body = alertBody();
    const response = await appWith(receiver).request(post(body, signed(body, 'not-the-secret')));
    expect(response.status).toBe(401);
    const text = await response.text();
    expect((JSON.parse(text) as ErrorBody).error.code).toBe('INVALID_SIGNATURE');
    expect(text).not.toContain(SECRET);
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual([]);
  });

  it('answers 413 for a body over maxBodyBytes, by Content-Length and counted in a stream', async () => {
    const { receiver, seen } = recorder.create(512);
    const app = appWith(receiver);
    const body = alertBody(0, { padding: 'x'.repeat(4000) });
    const declared = post(body, { ...signed(body), 'content-length': String(body.length) });
    const streamed = new Request(`http://localhost${PATH}`, {
      method: 'POST',
      headers: signed(body),
      body: new Blob([body]).stream(),
      duplex: 'half',
    } as RequestInit);
    for (const request of [declared, streamed]) {
      const response = await app.request(request);
      expect(response.status).toBe(413);
      expect(((await response.json()) as ErrorBody).error.code).toBe('PAYLOAD_TOO_LARGE');
    }
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual([]);
  });
});

describe('createHandler after a middleware that read the body', () => {
  // Indented JSON: a re-serialised parsed body would have other bytes and fail the signature.
  const readers: [string, MiddlewareHandler][] = [
    ['c.req.arrayBuffer()', readingWith((c) => c.req.arrayBuffer())],
    ['c.req.bytes()', readingWith((c) => c.req.bytes())],
    ['c.req.text()', readingWith((c) => c.req.text())],
    ['c.req.json()', readingWith((c) => c.req.json())],
    ['c.req.blob()', readingWith((c) => c.req.blob())],
  ];
  for (const [label, reader] of readers) {
    it(`verifies the bytes Hono kept after ${label}`, async () => {
      const { receiver, seen } = recorder.create();
      const body = alertBody(2, { note: 'café ✓' });
      const response = await appWith(receiver, reader).request(post(body));
      expect(response.status, await response.clone().text()).toBe(202);
      await receiver.drain({ timeoutMs: 5000 });
      expect(seen).toEqual([userIdOf(body)]);
    });
  }

  const consumers: [string, MiddlewareHandler][] = [
    ['c.req.raw.text()', readingWith((c) => c.req.raw.text())],
    [
      'an older Hono that kept only the parsed JSON',
      async (c, next) => {
        (c.req.bodyCache as Record<string, unknown>).json = c.req.raw.json();
        await next();
      },
    ],
    ['a reader that holds the stream', readingWith((c) => c.req.raw.body?.getReader())],
  ];
  for (const [label, consumer] of consumers) {
    for (const withLength of [false, true]) {
      it(`answers 500 RAW_BODY_MISSING naming the Hono fix after ${label}${withLength ? ' (Content-Length)' : ''}`, async () => {
        const { receiver, seen } = recorder.create();
        const rejected: string[] = [];
        receiver.onRejected(({ code }) => void rejected.push(code));
        const body = alertBody();
        const headers = signed(body);
        if (withLength) headers['content-length'] = String(body.length);
        const response = await appWith(receiver, consumer).request(post(body, headers));
        expect(response.status).toBe(500);
        const text = await response.text();
        const { error } = JSON.parse(text) as ErrorBody;
        expect(error.code).toBe(RAW_BODY_MISSING);
        const shared = JSON.parse(rawBodyMissingResult('').body) as ErrorBody;
        expect(error.message.startsWith(shared.error.message.trim())).toBe(true);
        expect(error.message).toContain('before any middleware that reads the body');
        expect(error.message).toContain('c.req.arrayBuffer() or c.req.text()');
        expect(text).not.toContain(SECRET);
        expect(rejected).toEqual([RAW_BODY_MISSING]); // went through receiver.refuse: reported
        await receiver.drain({ timeoutMs: 5000 });
        expect(seen).toEqual([]);
      });
    }
  }
});

/** A Workers-like execution context whose `waitUntil` works only when called on it. */
class FakeExecutionContext implements ExecutionContext {
  readonly kept: Promise<unknown>[] = [];
  readonly #brand = true;
  acceptedWhenCalled: number[] = [];
  props: unknown = {};

  constructor(private readonly receiver: Receiver) {}

  waitUntil(promise: Promise<unknown>): void {
    // Like workerd's "Illegal invocation": `this` must be the context itself.
    if (!(this instanceof FakeExecutionContext) || !this.#brand) {
      throw new TypeError('Illegal invocation');
    }
    this.acceptedWhenCalled.push(this.receiver.stats.accepted);
    this.kept.push(promise);
  }

  passThroughOnException(): void {}
}

describe('createHandler and the execution context', () => {
  it('processes in-process where c.executionCtx throws (Node): 202, and drain waits', async () => {
    const receiver = createReceiver({ secret: SECRET, retries: 0 });
    extraReceivers.push(receiver);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const events: string[] = [];
    receiver.on('churn_risk_alert', async () => {
      events.push('handler started');
      await held;
      events.push('handler finished');
    });
    const app = appWith(receiver);
    app.get('/ctx', (c) => {
      expect(() => c.executionCtx).toThrow(); // what makes the natural one-liner a 500
      return c.text('ok');
    });
    expect((await app.request('/ctx')).status).toBe(200);
    const response = await app.fetch(post(alertBody()));
    events.push(`answered ${response.status}`);
    const drained = receiver.drain({ timeoutMs: 5000 }).then(() => events.push('drained'));
    release();
    await drained;
    expect(events).toEqual(['answered 202', 'handler started', 'handler finished', 'drained']);
  });

  it('hands the processing to a bound ctx.waitUntil before accepting, and it settles after the handler', async () => {
    const receiver = createReceiver({ secret: SECRET, retries: 0 });
    extraReceivers.push(receiver);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let handled = false;
    receiver.on('churn_risk_alert', async () => {
      await held;
      handled = true;
    });
    const ctx = new FakeExecutionContext(receiver);
    const response = await appWith(receiver).fetch(post(alertBody()), {}, ctx);
    expect(response.status).toBe(202);
    expect(ctx.acceptedWhenCalled).toEqual([0]); // called before the alert was accepted
    expect(receiver.stats.accepted).toBe(1);
    expect(ctx.kept).toHaveLength(1);
    let settled = false;
    const kept = (ctx.kept[0] as Promise<unknown>).then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false); // the handler is still held
    release();
    await kept;
    expect(handled).toBe(true); // the promise the platform waits for covers the handler
  });

  it("consume: 'invocation': answers 202, then runs the durable queue's due alert inside ctx.waitUntil", async () => {
    const store = createMemoryStore();
    const receiver = createReceiver({
      secret: SECRET,
      queue: createDurableQueue(store),
      consume: 'invocation',
      keepAliveBudgetMs: 10_000,
    });
    extraReceivers.push(receiver);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let handled = false;
    receiver.on('churn_risk_alert', async () => {
      await held;
      handled = true;
    });
    const ctx = new FakeExecutionContext(receiver);
    const response = await appWith(receiver).fetch(post(alertBody()), {}, ctx);
    expect(response.status).toBe(202);
    expect(handled).toBe(false);
    expect(ctx.kept).toHaveLength(1);
    release();
    await ctx.kept[0];
    expect(handled).toBe(true); // the kept promise is the invocation's sweep, which ran it
    expect(await store.counts()).toMatchObject({ waiting: 0, active: 0, completed: 1 });
  });

  it('accepts nothing when ctx.waitUntil throws (500), and processes the redelivery', async () => {
    const { receiver, seen } = recorder.create();
    const broken: ExecutionContext = {
      waitUntil: () => {
        throw new TypeError('Illegal invocation');
      },
      passThroughOnException: () => undefined,
      props: {},
    };
    const body = alertBody();
    const app = appWith(receiver);
    const refused = await app.fetch(post(body), {}, broken);
    expect(refused.status).toBe(500);
    expect(((await refused.json()) as ErrorBody).error.code).toBe('INTERNAL_ERROR');
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual([]);
    const ctx = new FakeExecutionContext(receiver);
    const redelivered = await app.fetch(post(body), {}, ctx);
    expect(redelivered.status).toBe(202);
    expect(await redelivered.json()).toEqual({ received: true }); // not a duplicate
    await Promise.all(ctx.kept);
    expect(seen).toEqual([userIdOf(body)]);
  });

  it('uses options.waitUntil when given, also after a middleware read the body', async () => {
    const { receiver, seen } = recorder.create();
    const kept: Promise<unknown>[] = [];
    const app = new Hono();
    app.use(
      PATH,
      readingWith((c) => c.req.text()),
    );
    app.post(PATH, createHandler(receiver, { waitUntil: () => (p) => void kept.push(p) }));
    const body = alertBody();
    expect((await app.request(post(body))).status).toBe(202);
    expect(kept).toHaveLength(1);
    await Promise.all(kept);
    expect(seen).toEqual([userIdOf(body)]);
  });

  it('answers 500 and accepts nothing when options.waitUntil itself throws', async () => {
    const { receiver, seen } = recorder.create();
    const app = new Hono();
    app.post(
      PATH,
      createHandler(receiver, {
        waitUntil: () => {
          throw new Error('no platform context');
        },
      }),
    );
    const response = await app.request(post(alertBody()));
    expect(response.status).toBe(500);
    expect(((await response.json()) as ErrorBody).error.code).toBe('INTERNAL_ERROR');
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual([]);
  });
});

describe('createHandler on @hono/node-server', () => {
  async function listen(app: Hono): Promise<string> {
    const port = await new Promise<number>((resolve) => {
      servers.push(
        serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port)),
      );
    });
    return `http://127.0.0.1:${port}${PATH}`;
  }

  it('accepts a signed alert over a real socket, with and without Content-Length', async () => {
    const { receiver, seen } = recorder.create();
    const url = await listen(appWith(receiver));
    const framed = alertBody(2);
    const response = await fetch(url, { method: 'POST', headers: signed(framed), body: framed });
    expect(response.status).toBe(202);
    const chunked = alertBody(2);
    const second = await postChunked(url, signed(chunked), [
      chunked.slice(0, 40),
      chunked.slice(40),
    ]);
    expect(second.status).toBe(202);
    const get = await fetch(url);
    expect(get.status).toBe(405);
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual([userIdOf(framed), userIdOf(chunked)]);
  });

  it('answers 413 while reading a chunked body over the limit, and keeps serving', async () => {
    const { receiver, seen } = recorder.create(512);
    const url = await listen(appWith(receiver));
    const body = alertBody(0, { padding: 'x'.repeat(4000) });
    const chunks = body.match(/[\s\S]{1,300}/g) ?? [];
    const refused = await postChunked(url, signed(body), chunks);
    expect(refused.status).toBe(413);
    expect((JSON.parse(refused.body) as ErrorBody).error.code).toBe('PAYLOAD_TOO_LARGE');
    const small = alertBody();
    const ok = await postChunked(url, signed(small), [small]);
    expect(ok.status).toBe(202);
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual([userIdOf(small)]);
  });
});

describe('createHandler((c) => receiver): the receiver made from the request', () => {
  /** An app whose receiver is made from `env.CHURN_RISK_WEBHOOK_SECRET`, as on Workers. */
  function lazyApp(make: (secret: unknown) => Receiver): { app: Hono; made: () => number } {
    let receiver: Receiver | undefined;
    let made = 0;
    const app = new Hono<{ Bindings: { CHURN_RISK_WEBHOOK_SECRET?: string } }>();
    app.post(
      PATH,
      createHandler((c) => {
        receiver ??= make(
          (c.env as { CHURN_RISK_WEBHOOK_SECRET?: string }).CHURN_RISK_WEBHOOK_SECRET,
        );
        made += 1;
        return receiver;
      }),
    );
    return { app: app as unknown as Hono, made: () => made };
  }

  const errors: unknown[][] = [];
  const realError = console.error;
  afterEach(() => {
    console.error = realError;
    errors.length = 0;
  });
  const captureErrors = (): void => {
    console.error = (...args: unknown[]) => void errors.push(args);
  };

  it('verifies and runs the handlers of the receiver the function returns, made once', async () => {
    const seen: string[] = [];
    const { app, made } = lazyApp((secret) => {
      const receiver = createReceiver({ secret: secret as string, mode: 'sync' });
      extraReceivers.push(receiver);
      return receiver.on('churn_risk_alert', (alert) => void seen.push(alert.userId));
    });
    const env = { CHURN_RISK_WEBHOOK_SECRET: SECRET };
    const [first, second] = [alertBody(), alertBody()];
    expect((await app.request(post(first), {}, env)).status).toBe(202);
    expect((await app.request(post(second), {}, env)).status).toBe(202);
    expect(seen).toEqual([userIdOf(first), userIdOf(second)]);
    expect(made()).toBe(2);
  });

  it.each([
    ['missing', {}],
    ['empty', { CHURN_RISK_WEBHOOK_SECRET: '' }],
  ])(
    'answers a %s secret 500 INTERNAL_ERROR in JSON, naming the variable and how to set it, and logs it',
    async (_name, env) => {
      captureErrors();
      const { app } = lazyApp((secret) => createReceiver({ secret: secret as string }));
      const body = alertBody();
      const response = await app.request(post(body), {}, env);
      expect(response.status).toBe(500);
      expect(response.headers.get('content-type')).toContain('application/json');
      const { error } = (await response.json()) as ErrorBody;
      expect(error.code).toBe('INTERNAL_ERROR');
      expect(error.message).toBe(
        'The handler could not create its churn-risk receiver. A webhook secret is required: ' +
          'set CHURN_RISK_WEBHOOK_SECRET (or the variable you pass as secret) on Cloudflare ' +
          'Workers with npx wrangler secret put CHURN_RISK_WEBHOOK_SECRET (locally: in ' +
          '.dev.vars), elsewhere in the process environment.',
      );
      expect(errors).toHaveLength(1);
      expect(errors[0]?.[0]).toBe(error.message);
      expect(errors[0]?.[1]).toMatchObject({ code: 'INTERNAL_ERROR' });
    },
  );

  it('answers an IntegrationError (as resolveSecret of @churn-risk/cloudflare throws) as it is', async () => {
    captureErrors();
    const message =
      'The webhook secret is not set: secret(env) returned no non-empty string (it read ' +
      'env.WEBHOOK_KEY). Set it with npx wrangler secret put WEBHOOK_KEY (or in .dev.vars locally)';
    const { app } = lazyApp(() => {
      throw new IntegrationError('INTERNAL_ERROR', message);
    });
    const response = await app.request(post(alertBody()), {}, {});
    expect(response.status).toBe(500);
    expect((await response.json()) as ErrorBody).toEqual({
      error: { code: 'INTERNAL_ERROR', message },
    });
    expect(errors).toEqual([[message, { code: 'INTERNAL_ERROR' }]]);
  });

  it("answers the user's own failure 500 INTERNAL_ERROR without its message", async () => {
    captureErrors();
    const { app } = lazyApp(() => {
      throw new Error('db password hunter2 rejected');
    });
    const response = await app.request(post(alertBody()), {}, {});
    expect(response.status).toBe(500);
    const { error } = (await response.json()) as ErrorBody;
    expect(error).toEqual({
      code: 'INTERNAL_ERROR',
      message: 'The handler could not create its churn-risk receiver.',
    });
  });
});
