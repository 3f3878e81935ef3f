import type { Receiver } from '@churn-risk/core';
import type {
  D1Database,
  ExecutionContext,
  MessageBatch,
  Queue,
} from '@cloudflare/workers-types/index.ts';
import { describe, expectTypeOf, it } from 'vitest';
import {
  createQueueWorker,
  createWorker,
  type ChurnRiskQueueWorker,
  type ChurnRiskWorker,
} from './index.js';

interface Env {
  CHURN_RISK_WEBHOOK_SECRET: string;
  ALERTS: { put(key: string, value: string): Promise<void> };
}

describe('cloudflare adapter types', () => {
  // With workers-types as the global types (a Workers project, no DOM lib) the worker is an
  // `ExportedHandler<Env>` (checked by examples/cloudflare-worker's typecheck); here, beside the
  // DOM lib, its `Request` is the DOM one, so the check is on the context.
  it('returns a module worker that takes a workers-types ExecutionContext', () => {
    const worker = createWorker<Env>({
      secret: (env) => env.CHURN_RISK_WEBHOOK_SECRET,
      setup: (receiver, env) => {
        expectTypeOf(receiver).toEqualTypeOf<Receiver>();
        expectTypeOf(env).toEqualTypeOf<Env>();
        receiver.on('churn_risk_alert', async (alert) => {
          await env.ALERTS.put(alert.userId, alert.tier);
        });
      },
    });
    expectTypeOf(worker).toEqualTypeOf<ChurnRiskWorker<Env>>();
    expectTypeOf<ExecutionContext>().toExtend<Parameters<typeof worker.fetch>[2]>();
    expectTypeOf(worker.fetch).parameter(1).toEqualTypeOf<Env>();
    expectTypeOf(worker.fetch).returns.toEqualTypeOf<Promise<Response>>();
  });

  it('infers Env from an annotated secret function, and takes a plain secret', () => {
    const inferred = createWorker({
      secret: (env: Env) => env.CHURN_RISK_WEBHOOK_SECRET,
      setup: () => undefined,
    });
    expectTypeOf(inferred).toEqualTypeOf<ChurnRiskWorker<Env>>();
    createWorker({ secret: 'whsec_literal', setup: () => undefined });
    createWorker({ secret: ['whsec_new', 'whsec_old'], setup: () => undefined, mode: 'sync' });
  });

  it('refuses what is not an option', () => {
    // @ts-expect-error setup is required
    createWorker({ secret: 'whsec_x' });
    // @ts-expect-error concurrency is not an option: each alert runs in its own request
    createWorker({ secret: 'whsec_x', setup: () => undefined, concurrency: 1 });
    // @ts-expect-error the secret is a string, strings, or a function of env
    createWorker({ secret: 42, setup: () => undefined });
  });

  it('queue mode takes workers-types Queue and D1 bindings and gives a consumer for MessageBatch', () => {
    interface QueueEnv {
      CHURN_RISK_WEBHOOK_SECRET: string;
      CHURN_RISK_ALERTS: Queue;
      CHURN_RISK_DB: D1Database;
    }
    const worker = createQueueWorker<QueueEnv>({
      secret: (env) => env.CHURN_RISK_WEBHOOK_SECRET,
      queue: (env) => env.CHURN_RISK_ALERTS,
      dedupe: (env) => env.CHURN_RISK_DB,
      setup: () => undefined,
    });
    expectTypeOf(worker).toEqualTypeOf<ChurnRiskQueueWorker<QueueEnv>>();
    expectTypeOf<MessageBatch>().toExtend<Parameters<typeof worker.queue>[0]>();
    expectTypeOf<ExecutionContext>().toExtend<Parameters<typeof worker.queue>[2]>();
  });

  it('takes queue mode from the function, never from a flag', () => {
    interface QueueEnv {
      CHURN_RISK_WEBHOOK_SECRET: string;
      CHURN_RISK_ALERTS: Queue;
      CHURN_RISK_DB: D1Database;
    }
    const setup = (): void => undefined;
    const secret = (env: QueueEnv): string => env.CHURN_RISK_WEBHOOK_SECRET;
    // @ts-expect-error queue mode is createQueueWorker
    createWorker<QueueEnv>({ secret, setup, queue: (env) => env.CHURN_RISK_ALERTS });
    // @ts-expect-error the failed store is queue mode's
    createWorker<QueueEnv>({ secret, setup, failed: (env) => env.CHURN_RISK_DB });
    // An in-memory worker may still share its de-duplication through D1.
    const memory = createWorker<QueueEnv>({ secret, setup, dedupe: (env) => env.CHURN_RISK_DB });
    expectTypeOf(memory).toEqualTypeOf<ChurnRiskWorker<QueueEnv>>();
    // @ts-expect-error createQueueWorker needs the Queue's producer
    createQueueWorker<QueueEnv>({ secret, setup, dedupe: (env) => env.CHURN_RISK_DB });
    createQueueWorker<QueueEnv>({
      secret,
      setup,
      queue: (env) => env.CHURN_RISK_ALERTS,
      // @ts-expect-error queue mode's dedupe is a D1 binding (or none), not in-memory settings
      dedupe: { maxEntries: 10 },
      failed: (env) => env.CHURN_RISK_DB,
    });
  });
});
