import { createReceiver } from '@churn-risk/core';
import { createTestDelivery } from '@churn-risk/core/testing';
import { describe, expect, it } from 'vitest';
import { createRouteHandler } from './create-route-handler.js';

const SECRET = 'whsec_next_route_handler';

function alert(userId: string): Record<string, unknown> {
  return {
    event: 'churn_risk_alert',
    userId,
    score: 0.91,
    tier: 'high',
    signals: ['activity_drop'],
    recommendation: 'Call them.',
    triggeredAt: new Date().toISOString(),
  };
}

function post(delivery: { headers: Record<string, string>; body: string }): Request {
  return new Request('http://localhost/api/webhooks/churn-risk', {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body,
  });
}

describe('createRouteHandler outside a Next request scope', () => {
  it('refuses an unknown option key, naming the closest known one', () => {
    const receiver = createReceiver({ secret: SECRET, retries: 0 });
    expect(() => createRouteHandler(receiver, { waitUtil: () => undefined } as never)).toThrow(
      new TypeError(
        'createRouteHandler does not know the option "waitUtil" (did you mean waitUntil?). ' +
          'Known options: waitUntil.',
      ),
    );
  });

  it('hands the processing to the injected waitUntil, which settles after the handler', async () => {
    const receiver = createReceiver({ secret: SECRET, retries: 0 });
    const events: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    receiver.on('churn_risk_alert', async (received) => {
      await held;
      events.push(`handled ${received.userId}`);
    });
    const kept: Promise<unknown>[] = [];
    const POST = createRouteHandler(receiver, { waitUntil: (promise) => kept.push(promise) });

    const response = await POST(post(createTestDelivery(alert('u_wait'), { secret: SECRET })));
    events.push(`answered ${response.status}`);
    expect(await response.json()).toEqual({ received: true });
    expect(kept).toHaveLength(1);

    release();
    await kept[0];
    expect(events).toEqual(['answered 202', 'handled u_wait']);
    await receiver.close();
  });

  it('without waitUntil still processes the alert in-process (drain tracks it)', async () => {
    const receiver = createReceiver({ secret: SECRET, retries: 0 });
    const seen: string[] = [];
    receiver.on('churn_risk_alert', (received) => {
      seen.push(received.userId);
    });
    const POST = createRouteHandler(receiver);
    const response = await POST(post(createTestDelivery(alert('u_plain'), { secret: SECRET })));
    expect(response.status).toBe(202);
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual(['u_plain']);
    await receiver.close();
  });

  it('refuses a body over maxBodyBytes sent without Content-Length (a stream) with 413', async () => {
    const receiver = createReceiver({ secret: SECRET, maxBodyBytes: 64 });
    let runs = 0;
    receiver.on('churn_risk_alert', () => {
      runs += 1;
    });
    const delivery = createTestDelivery(alert('u_big'), { secret: SECRET });
    const bytes = new TextEncoder().encode(delivery.body);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 16) controller.enqueue(bytes.subarray(i, i + 16));
        controller.close();
      },
    });
    const request = new Request('http://localhost/hook', {
      method: 'POST',
      headers: delivery.headers,
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(request.headers.get('content-length')).toBeNull();
    const response = await createRouteHandler(receiver)(request);
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      'PAYLOAD_TOO_LARGE',
    );
    await receiver.drain({ timeoutMs: 5000 });
    expect(runs).toBe(0);
    await receiver.close();
  });

  it('verifies the exact bytes: a non-ASCII body signed as sent is accepted', async () => {
    const receiver = createReceiver({ secret: SECRET, retries: 0 });
    const seen: string[] = [];
    receiver.on('churn_risk_alert', (received) => {
      seen.push(received.recommendation);
    });
    const delivery = createTestDelivery(
      { ...alert('u_utf8'), recommendation: 'Offrir un café ☕' },
      { secret: SECRET },
    );
    const response = await createRouteHandler(receiver)(post(delivery));
    expect(response.status).toBe(202);
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual(['Offrir un café ☕']);
    await receiver.close();
  });
});

describe('createRouteHandler(() => receiver): made at the request', () => {
  it('makes nothing when the route is created, then serves the receiver the function returns', async () => {
    let made = 0;
    let receiver: ReturnType<typeof createReceiver> | undefined;
    const seen: string[] = [];
    const POST = createRouteHandler(() => {
      made += 1;
      receiver ??= createReceiver({ secret: SECRET, mode: 'sync' }).on('churn_risk_alert', (a) => {
        seen.push(a.userId);
      });
      return receiver;
    });
    expect(made).toBe(0);
    const response = await POST(post(createTestDelivery(alert('route_lazy'), { secret: SECRET })));
    expect(response.status).toBe(202);
    expect(seen).toEqual(['route_lazy']);
    expect(made).toBe(1);
  });

  it('answers a missing secret 500 INTERNAL_ERROR in JSON, naming the variable and how to set it, and logs it', async () => {
    const logged: unknown[][] = [];
    const realError = console.error;
    console.error = (...args: unknown[]) => void logged.push(args);
    try {
      const env: Record<string, string | undefined> = {};
      const POST = createRouteHandler(() =>
        createReceiver({ secret: env.CHURN_RISK_WEBHOOK_SECRET as string }),
      );
      const response = await POST(
        post(createTestDelivery(alert('route_unset'), { secret: SECRET })),
      );
      expect(response.status).toBe(500);
      expect(response.headers.get('content-type')).toContain('application/json');
      const { error } = (await response.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('INTERNAL_ERROR');
      expect(error.message).toBe(
        'The route could not create its churn-risk receiver. A webhook secret is required: set ' +
          "CHURN_RISK_WEBHOOK_SECRET (or the variable you pass as secret) in the deployment's " +
          'environment variables (on Vercel: Project Settings, Environment Variables; locally: ' +
          '.env.local), then redeploy.',
      );
      expect(logged).toHaveLength(1);
      expect(logged[0]?.[0]).toBe(error.message);
    } finally {
      console.error = realError;
    }
  });

  it("answers the app's own failure 500 INTERNAL_ERROR without its message", async () => {
    const realError = console.error;
    console.error = () => undefined;
    try {
      const POST = createRouteHandler(() => {
        throw new Error('postgres://app:hunter2@db refused');
      });
      const response = await POST(post(createTestDelivery(alert('route_own'), { secret: SECRET })));
      expect(response.status).toBe(500);
      expect(await response.json()).toEqual({
        error: {
          code: 'INTERNAL_ERROR',
          message: 'The route could not create its churn-risk receiver.',
        },
      });
    } finally {
      console.error = realError;
    }
  });
});
