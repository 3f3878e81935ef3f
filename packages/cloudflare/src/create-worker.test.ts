import { createTestDelivery } from '@churn-risk/core/testing';
import type { ChurnRiskAlert, Receiver } from '@churn-risk/core';
import { describe, expect, it, vi } from 'vitest';
import { createWorker, type WorkerExecutionContext } from './index.js';

// createWorker in Node with a stand-in `ctx` whose `waitUntil`, like workerd's, throws when it is
// called unbound. The same worker runs in workerd itself in create-worker.workerd.test.ts.
const SECRET = 'whsec_cloudflare_unit_5b1e';

interface Env {
  CHURN_RISK_WEBHOOK_SECRET?: string;
}

let sequence = 0;
function delivery(secret = SECRET): Request {
  sequence++;
  const { headers, body } = createTestDelivery(
    { userId: `user_cf_${sequence}`, triggeredAt: new Date(Date.now() - sequence).toISOString() },
    { secret },
  );
  return new Request('https://worker.example/webhooks/churn-risk', {
    method: 'POST',
    headers: headers,
    body: body,
  });
}

/** An execution context whose `waitUntil` throws "Illegal invocation" unless called on it. */
function executionContext(): WorkerExecutionContext & { kept: Promise<unknown>[] } {
  const ctx = {
    kept: [] as Promise<unknown>[],
    waitUntil(this: unknown, promise: Promise<unknown>): void {
      if (this !== ctx) throw new TypeError('Illegal invocation');
      ctx.kept.push(promise);
    },
  };
  return ctx;
}

const quiet = { debug() {}, info() {}, warn() {}, error: vi.fn() };

async function errorOf(response: Response): Promise<{ code: string; message: string }> {
  return ((await response.json()) as { error: { code: string; message: string } }).error;
}

describe('createWorker', () => {
  it('answers 202 and keeps the handler alive through the bound ctx.waitUntil', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const handled: string[] = [];
    const worker = createWorker<Env>({
      secret: (env) => env.CHURN_RISK_WEBHOOK_SECRET,
      setup: (receiver) => {
        receiver.on('churn_risk_alert', async (alert: ChurnRiskAlert) => {
          await held;
          handled.push(alert.userId);
        });
      },
    });
    const ctx = executionContext();
    const response = await worker.fetch(delivery(), { CHURN_RISK_WEBHOOK_SECRET: SECRET }, ctx);
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ received: true });
    expect(ctx.kept).toHaveLength(1);
    expect(handled).toEqual([]); // answered before the handler finished

    let settled = false;
    const kept = (ctx.kept[0] as Promise<unknown>).then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled).toBe(false); // the kept promise waits for the handler
    release();
    await kept;
    expect(handled).toHaveLength(1);
  });

  it('builds the receiver once per isolate, from the first env, and reuses it', async () => {
    const setup = vi.fn((receiver: Receiver, _env: Env) => {
      receiver.on('churn_risk_alert', () => undefined);
    });
    const secret = vi.fn((env: Env) => env.CHURN_RISK_WEBHOOK_SECRET);
    const worker = createWorker<Env>({ secret, setup });
    const env = { CHURN_RISK_WEBHOOK_SECRET: SECRET };
    for (let i = 0; i < 3; i++) {
      const response = await worker.fetch(delivery(), env, executionContext());
      expect(response.status).toBe(202);
    }
    expect(secret).toHaveBeenCalledTimes(1);
    expect(setup).toHaveBeenCalledTimes(1);
    const receiver = setup.mock.calls[0]?.[0];
    expect(receiver?.stats.accepted).toBe(3);
    expect(setup.mock.calls[0]?.[1]).toEqual(env);
  });

  it('answers a duplicate from the same isolate as a duplicate', async () => {
    const handler = vi.fn();
    const worker = createWorker({
      secret: SECRET,
      setup: (receiver) => receiver.on('churn_risk_alert', handler),
    });
    const first = delivery();
    const again = first.clone();
    const ctx = executionContext();
    expect((await worker.fetch(first, {}, ctx)).status).toBe(202);
    const duplicate = await worker.fetch(again, {}, ctx);
    expect(await duplicate.json()).toEqual({ received: true, duplicate: true });
    await Promise.all(ctx.kept);
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('without the secret: 500 INTERNAL_ERROR naming the binding, nothing accepted, then recovers', async () => {
    const handler = vi.fn();
    const error = vi.fn();
    const worker = createWorker<Env>({
      secret: (env) => env.CHURN_RISK_WEBHOOK_SECRET,
      setup: (receiver) => receiver.on('churn_risk_alert', handler),
      logger: { ...quiet, error },
    });
    const ctx = executionContext();
    for (const env of [{}, { CHURN_RISK_WEBHOOK_SECRET: '' }]) {
      const response = await worker.fetch(delivery(), env, ctx);
      expect(response.status).toBe(500);
      const { code, message } = await errorOf(response);
      expect(code).toBe('INTERNAL_ERROR');
      expect(message).toContain('env.CHURN_RISK_WEBHOOK_SECRET');
      expect(message).toContain('wrangler secret put CHURN_RISK_WEBHOOK_SECRET');
    }
    expect(ctx.kept).toHaveLength(0);
    expect(error).toHaveBeenCalledTimes(2);
    expect(error.mock.calls[0]?.[1]).toContain('env.CHURN_RISK_WEBHOOK_SECRET');

    // Not kept: the next request with the secret builds the receiver and is accepted.
    const response = await worker.fetch(delivery(), { CHURN_RISK_WEBHOOK_SECRET: SECRET }, ctx);
    expect(response.status).toBe(202);
    await Promise.all(ctx.kept);
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('without the secret: the answer and the log line name CHURN_RISK_WEBHOOK_SECRET and wrangler secret put, not the body', async () => {
    const error = vi.fn();
    for (const secret of ['', (env: Env) => env.CHURN_RISK_WEBHOOK_SECRET, () => [SECRET, '']]) {
      error.mockClear();
      const worker = createWorker<Env>({
        secret,
        setup: () => undefined,
        logger: { ...quiet, error },
      });
      const request = delivery();
      const body = await request.clone().text();
      const response = await worker.fetch(request, {}, executionContext());
      expect(response.status).toBe(500);
      expect(response.headers.get('content-type')).toContain('application/json');
      const text = await response.text();
      const { code, message } = (JSON.parse(text) as { error: { code: string; message: string } })
        .error;
      expect(code).toBe('INTERNAL_ERROR');
      expect(message).toContain('npx wrangler secret put CHURN_RISK_WEBHOOK_SECRET');
      expect(text).not.toContain(body);
      expect(text).not.toContain(SECRET);
      const logged = JSON.stringify(error.mock.calls);
      expect(logged).toContain('npx wrangler secret put CHURN_RISK_WEBHOOK_SECRET');
      expect(logged).not.toContain(SECRET);
    }
  });

  it('never puts a secret into an answer or a log line', async () => {
    const error = vi.fn();
    const other = 'whsec_other_secret_must_not_leak';
    const worker = createWorker({
      secret: (env: { A?: string; B: string }) => env.A,
      setup: () => undefined,
      logger: { ...quiet, error },
    });
    const response = await worker.fetch(delivery(), { B: other }, executionContext());
    const text = await response.text();
    expect(text).toContain('env.A');
    expect(text).not.toContain(other);
    expect(JSON.stringify(error.mock.calls)).not.toContain(other);
  });

  it('a setup that throws answers 500 without its message, and the next request builds again', async () => {
    const error = vi.fn();
    let calls = 0;
    const worker = createWorker({
      secret: SECRET,
      setup: (receiver) => {
        calls++;
        if (calls === 1) throw new Error('setup detail that must stay in the log');
        receiver.on('churn_risk_alert', () => undefined);
      },
      logger: { ...quiet, error },
    });
    const failed = await worker.fetch(delivery(), {}, executionContext());
    expect(failed.status).toBe(500);
    const body = await errorOf(failed);
    expect(body.code).toBe('INTERNAL_ERROR');
    expect(body.message).not.toContain('setup detail');
    expect(error).toHaveBeenCalledTimes(1);
    expect((await worker.fetch(delivery(), {}, executionContext())).status).toBe(202);
    expect(calls).toBe(2);
  });

  it('passes the other receiver options through (maxBodyBytes, header names)', async () => {
    const worker = createWorker({
      secret: SECRET,
      maxBodyBytes: 64,
      setup: (receiver) => receiver.on('churn_risk_alert', () => undefined),
      logger: quiet,
    });
    const response = await worker.fetch(delivery(), {}, executionContext());
    expect(response.status).toBe(413);
    expect((await errorOf(response)).code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('without a usable ctx nothing is accepted: 500 INTERNAL_ERROR, and the redelivery is new', async () => {
    const handler = vi.fn();
    const worker = createWorker({
      secret: SECRET,
      setup: (receiver) => receiver.on('churn_risk_alert', handler),
      logger: quiet,
    });
    const first = delivery();
    const again = first.clone();
    const broken = await worker.fetch(first, {}, undefined as unknown as WorkerExecutionContext);
    expect(broken.status).toBe(500);
    expect((await errorOf(broken)).code).toBe('INTERNAL_ERROR');
    const ctx = executionContext();
    const redelivered = await worker.fetch(again, {}, ctx);
    expect(await redelivered.json()).toEqual({ received: true }); // not a duplicate
    await Promise.all(ctx.kept);
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('refuses bad options at creation', () => {
    expect(() => createWorker({ secret: SECRET } as never)).toThrow(/setup/);
    expect(() => createWorker({ setup: () => undefined } as never)).toThrow(/secret/);
  });

  it('refuses an unknown option at creation, naming the closest known one', () => {
    const setup = (): void => undefined;
    const refusal = (options: Record<string, unknown>): unknown => {
      try {
        createWorker({ secret: SECRET, setup, ...options });
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const typo = refusal({ dedupeTtl: 60_000 });
    expect(typo).toBeInstanceOf(TypeError);
    expect((typo as Error).message).toMatch(
      /^createWorker does not know the option "dedupeTtl" \(did you mean dedupeTtlMs\?\)/,
    );
    expect((refusal({ onError: () => undefined }) as Error).message).toContain(
      'call receiver.onError(fn) in setup',
    );
    // Not an option here (each alert runs in its own request), in JavaScript as in TypeScript.
    expect((refusal({ concurrency: 4 }) as Error).message).toContain('"concurrency"');
  });

  it('takes dedupeTtlMs for the in-memory identities too, and refuses dedupe: { ttlMs }', async () => {
    let now = Date.now();
    const worker = createWorker({
      secret: SECRET,
      dedupeTtlMs: 1_000,
      now: () => now,
      setup: (receiver) => receiver.on('churn_risk_alert', () => undefined),
      logger: quiet,
    });
    const first = delivery();
    const again = first.clone();
    const later = first.clone();
    expect(await (await worker.fetch(first, {}, executionContext())).json()).toEqual({
      received: true,
    });
    expect(await (await worker.fetch(again, {}, executionContext())).json()).toEqual({
      received: true,
      duplicate: true,
    });
    now += 1_001;
    expect(await (await worker.fetch(later, {}, executionContext())).json()).toEqual({
      received: true,
    });
    const error = vi.fn();
    const nested = createWorker({
      secret: SECRET,
      dedupe: { ttlMs: 1_000 } as never,
      setup: () => undefined,
      logger: { ...quiet, error },
    });
    const refused = await nested.fetch(delivery(), {}, executionContext());
    expect(refused.status).toBe(500); // the receiver is built at the first request
    const [[fields]] = error.mock.calls as [[{ err: Error }]];
    expect(fields.err).toBeInstanceOf(TypeError);
    expect(fields.err.message).toMatch(/"ttlMs" \(.*dedupeTtlMs\)/);
  });

  it("refuses queue mode's options, naming createQueueWorker", () => {
    const setup = (): void => undefined;
    for (const key of ['queue', 'failed', 'deadLetterQueue']) {
      let refused: unknown;
      try {
        createWorker({ secret: SECRET, setup, [key]: () => ({}) });
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(TypeError);
      expect((refused as Error).message).toMatch(
        new RegExp(
          `^createWorker does not know the option "${key}" \\(queue mode is createQueueWorker\\(`,
        ),
      );
    }
  });

  it("reports an alert still running at 27 s of Workers' 30 s budget: onError CUT_OFF once, one error line", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const errors: unknown[] = [];
      const logger = { debug() {}, info() {}, warn() {}, error: vi.fn() };
      const worker = createWorker<Env>({
        secret: (env) => env.CHURN_RISK_WEBHOOK_SECRET,
        logger,
        setup: (receiver) => {
          receiver.on('churn_risk_alert', () => new Promise<void>(() => undefined));
          receiver.onError((error) => void errors.push(error));
        },
      });
      const ctx = executionContext();
      const response = await worker.fetch(delivery(), { CHURN_RISK_WEBHOOK_SECRET: SECRET }, ctx);
      expect(response.status).toBe(202);
      await vi.advanceTimersByTimeAsync(26_999);
      expect(errors).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      expect(errors).toHaveLength(1);
      expect((errors[0] as { code?: string }).code).toBe('CUT_OFF');
      const lines = logger.error.mock.calls.filter(
        ([fields]) => (fields as { code?: string }).code === 'CUT_OFF',
      );
      expect(lines).toHaveLength(1);
      // The fix it names: queue mode.
      expect(String(lines[0]?.[1])).toMatch(/@churn-risk\/cloudflare, createQueueWorker\)/);
      await Promise.all(ctx.kept); // the waitUntil promise settles with the report
    } finally {
      vi.useRealTimers();
    }
  });
});
