import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NextApiRequest, NextApiResponse } from 'next';
import { createReceiver, type Receiver } from '@churn-risk/core';
import { createDurableQueue, createMemoryStore } from '@churn-risk/core/store';
import { RAW_BODY_MISSING, rawBodyMissingResult } from '@churn-risk/core/adapter';
import { createTestDelivery } from '@churn-risk/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { BODY_PARSER_CONFIG_LINE, createPagesHandler } from './create-pages-handler.js';

const SECRET = 'whsec_next_pages_handler';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** Serves `listener` on 127.0.0.1 and sends one request with the exact body bytes. */
async function serveOnce(
  listener: (req: IncomingMessage, res: ServerResponse) => void,
  init: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<Answer> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  const { port } = server.address() as AddressInfo;
  return new Promise<Answer>((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/api/webhooks/churn-risk',
        method: init.method ?? 'POST',
        headers: init.headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(init.body);
  });
}

function alert(userId: string): Record<string, unknown> {
  return {
    event: 'churn_risk_alert',
    userId,
    score: 0.8,
    tier: 'high',
    signals: ['payment_failed'],
    recommendation: 'Fix the card.',
    triggeredAt: new Date().toISOString(),
  };
}

function receiverWithLog(): { receiver: Receiver; seen: string[] } {
  const receiver = createReceiver({ secret: SECRET, retries: 0 });
  const seen: string[] = [];
  receiver.on('churn_risk_alert', (received) => {
    seen.push(received.userId);
  });
  closers.push(() => receiver.close({ timeoutMs: 5000 }));
  return { receiver, seen };
}

const asNext =
  (handler: ReturnType<typeof createPagesHandler>) => (req: IncomingMessage, res: ServerResponse) =>
    void handler(req as NextApiRequest, res as NextApiResponse);

describe('createPagesHandler', () => {
  it('refuses an unknown option key, naming the closest known one', () => {
    const { receiver } = receiverWithLog();
    expect(() => createPagesHandler(receiver, { waituntil: () => undefined } as never)).toThrow(
      /^createPagesHandler does not know the option "waituntil" \(did you mean waitUntil\?\)/,
    );
  });

  it('answers 500 naming the bodyParser line when Next already parsed the body, and runs nothing', async () => {
    const { receiver, seen } = receiverWithLog();
    const handler = createPagesHandler(receiver);
    const delivery = createTestDelivery(alert('u_parsed'), { secret: SECRET });
    // What Next's default body parser does before calling the route: read the stream, set req.body.
    const answer = await serveOnce(
      (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          Object.assign(req, {
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown,
          });
          asNext(handler)(req, res);
        });
      },
      { headers: delivery.headers, body: delivery.body },
    );
    expect(answer.status).toBe(500);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    const { error } = JSON.parse(answer.body) as { error: { code: string; message: string } };
    expect(error.code).toBe('RAW_BODY_MISSING');
    expect(error.code).toBe(RAW_BODY_MISSING);
    // The core's one message, ending with the Pages Router fix.
    const shared = JSON.parse(rawBodyMissingResult('').body) as { error: { message: string } };
    expect(error.message.startsWith(shared.error.message.trim())).toBe(true);
    expect(error.message).toContain(BODY_PARSER_CONFIG_LINE);
    expect(BODY_PARSER_CONFIG_LINE).toBe('export const config = { api: { bodyParser: false } };');
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual([]);
  });

  it.each(['GET', 'PUT'])(
    'answers 405 Allow: POST to %s even when Next parsed the body, and runs nothing',
    async (method) => {
      const { receiver, seen } = receiverWithLog();
      const handler = createPagesHandler(receiver);
      const delivery = createTestDelivery(alert('u_method'), { secret: SECRET });
      // Next's default body parser ran: the stream is read and req.body is set.
      const answer = await serveOnce(
        (req, res) => {
          req.resume();
          req.on('end', () => {
            Object.assign(req, { body: {} });
            asNext(handler)(req, res);
          });
        },
        { method, headers: delivery.headers, body: method === 'GET' ? '' : delivery.body },
      );
      expect(answer.status).toBe(405);
      expect(answer.headers.allow).toBe('POST');
      await receiver.drain({ timeoutMs: 5000 });
      expect(seen).toEqual([]);
    },
  );

  it('answers 500 too when the stream was consumed without setting req.body', async () => {
    const { receiver } = receiverWithLog();
    const handler = createPagesHandler(receiver);
    const delivery = createTestDelivery(alert('u_consumed'), { secret: SECRET });
    const answer = await serveOnce(
      (req, res) => {
        req.resume();
        req.on('end', () => asNext(handler)(req, res));
      },
      { headers: delivery.headers, body: delivery.body },
    );
    expect(answer.status).toBe(500);
    expect(answer.body).toContain('bodyParser: false');
  });

  it('accepts a signed delivery and hands the processing to waitUntil', async () => {
    const { receiver, seen } = receiverWithLog();
    const kept: Promise<unknown>[] = [];
    const handler = createPagesHandler(receiver, { waitUntil: (promise) => kept.push(promise) });
    const delivery = createTestDelivery(alert('u_pages'), { secret: SECRET });
    const answer = await serveOnce(asNext(handler), {
      headers: delivery.headers,
      body: delivery.body,
    });
    expect(answer.status).toBe(202);
    expect(JSON.parse(answer.body)).toEqual({ received: true });
    expect(kept).toHaveLength(1);
    await kept[0];
    expect(seen).toEqual(['u_pages']);
  });

  it("consume: 'invocation': the kept promise runs the durable queue's due alert after the 202", async () => {
    const store = createMemoryStore();
    const receiver = createReceiver({
      secret: SECRET,
      queue: createDurableQueue(store),
      consume: 'invocation',
      keepAliveBudgetMs: 10_000,
    });
    closers.push(() => receiver.close({ timeoutMs: 5000 }));
    const seen: string[] = [];
    receiver.on('churn_risk_alert', (a) => void seen.push(a.userId));
    const kept: Promise<unknown>[] = [];
    const handler = createPagesHandler(receiver, { waitUntil: (promise) => kept.push(promise) });
    const delivery = createTestDelivery(alert('u_pages_invoked'), { secret: SECRET });
    const answer = await serveOnce(asNext(handler), {
      headers: delivery.headers,
      body: delivery.body,
    });
    expect(answer.status).toBe(202);
    expect(kept).toHaveLength(1);
    await kept[0];
    expect(seen).toEqual(['u_pages_invoked']);
    expect(await store.counts()).toMatchObject({ waiting: 0, active: 0, completed: 1 });
  });

  it('answers 413 with Connection: close when the body passes maxBodyBytes', async () => {
    const receiver = createReceiver({ secret: SECRET, maxBodyBytes: 32 });
    closers.push(() => receiver.close({ timeoutMs: 5000 }));
    const delivery = createTestDelivery(alert('u_large'), { secret: SECRET });
    const answer = await serveOnce(asNext(createPagesHandler(receiver)), {
      headers: delivery.headers,
      body: delivery.body,
    });
    expect(answer.status).toBe(413);
    expect(answer.headers.connection).toBe('close');
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'PAYLOAD_TOO_LARGE' } });
  });
});

describe('createPagesHandler(() => receiver): made at the request', () => {
  it('serves the receiver the function returns, and answers a missing secret 500 INTERNAL_ERROR in JSON naming how to set it', async () => {
    const { receiver, seen } = receiverWithLog();
    const delivery = createTestDelivery(alert('pages_lazy'), { secret: SECRET });
    const served = createPagesHandler(() => receiver) as unknown as (
      req: IncomingMessage,
      res: ServerResponse,
    ) => void;
    const ok = await serveOnce(served, { headers: delivery.headers, body: delivery.body });
    expect(ok.status).toBe(202);
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual(['pages_lazy']);

    const realError = console.error;
    const logged: unknown[][] = [];
    console.error = (...args: unknown[]) => void logged.push(args);
    try {
      const unset = createPagesHandler(() =>
        createReceiver({ secret: process.env.CHURN_RISK_TEST_UNSET_SECRET as string }),
      ) as unknown as (req: IncomingMessage, res: ServerResponse) => void;
      const answer = await serveOnce(unset, { headers: delivery.headers, body: delivery.body });
      expect(answer.status).toBe(500);
      const { error } = JSON.parse(answer.body) as { error: { code: string; message: string } };
      expect(error.code).toBe('INTERNAL_ERROR');
      expect(error.message).toContain('webhook secret is required');
      expect(error.message).toContain('CHURN_RISK_WEBHOOK_SECRET');
      expect(error.message).toContain("in the deployment's environment variables (on Vercel");
      expect(logged).toHaveLength(1);
    } finally {
      console.error = realError;
    }
  });
});
