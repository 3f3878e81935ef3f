import type { AlertQueue } from './receiver/alert-queue.js';
import { createReceiver } from './receiver/create-receiver.js';
import type { AlertContext, Receiver } from './receiver/types.js';
import { signPayload } from './signature/sign.js';

/**
 * The test functions `queueContract` registers its cases with: vitest's, jest's, mocha's or
 * `node:test`'s `describe` and `it` all fit. The contract asserts on its own (it throws an `Error`
 * that says what differs), so no `expect` is needed.
 */
export interface ContractTestApi {
  /** Groups the contract's cases under `name` (the runner's `describe`). */
  describe(name: string, fn: () => void): unknown;
  /** `timeout` (ms) is passed as the third argument, as vitest, jest and bun take it. */
  it(name: string, fn: () => Promise<void>, timeout?: number): unknown;
}

/** What `queueContract` runs against. */
export interface QueueContractOptions {
  /** The back end's name, in the suite's title. */
  name: string;
  /**
   * A queue on a store of its own for the case named `scope`: queues made with the same `scope`
   * share their store, as processes that share a Redis do; other scopes never see each other's
   * alerts. Called once or more per case; the contract closes every queue through its receiver.
   */
  create(scope: string): AlertQueue | Promise<AlertQueue>;
  /** Milliseconds each case may take. Default 30,000. */
  timeoutMs?: number;
}

/** A queue's failed-set tools, when it has them (`@churn-risk/redis` does). */
interface FailedSet {
  failed(): Promise<{ id: string; error: string; tries: number }[]>;
  retry(id: string): Promise<void>;
}

function hasFailedSet(queue: AlertQueue): queue is AlertQueue & FailedSet {
  const candidate = queue as Partial<FailedSet>;
  return typeof candidate.failed === 'function' && typeof candidate.retry === 'function';
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`queueContract: ${message}`);
}
const same = (actual: unknown, expected: unknown, what: string): void => {
  const a = JSON.stringify(actual);
  const b = JSON.stringify(expected);
  check(a === b, `${what}: expected ${b}, got ${a}`);
};

const SECRET = 'whsec_queue_contract';
let sequence = 0;

/** A signed delivery of a fresh alert, for `receiver.handle`. */
function delivery(): { method: string; headers: Record<string, string>; body: string } {
  sequence += 1;
  const body = JSON.stringify({
    event: 'churn_risk_alert',
    userId: `contract_${String(sequence)}_${Math.random().toString(36).slice(2, 8)}`,
    score: 0.8,
    tier: 'high',
    signals: ['activity_drop'],
    recommendation: 'Reach out.',
    triggeredAt: new Date(Date.UTC(2026, 0, 1) + sequence * 1000).toISOString(),
  });
  const { signature, timestamp } = signPayload({ body, secret: SECRET });
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-service-signature': signature,
      'x-service-timestamp': timestamp,
    },
    body,
  };
}

/**
 * Registers the back-end contract of SPEC 13 as test cases: what every `queue` of
 * `createReceiver` must do under core's try protocol (accept with dedupe, run each handler, retry
 * the failed ones only, report after the last try once, close). A queue with `failed()` and
 * `retry(id)` is also checked to keep a failed alert and run it again. `@churn-risk/core`'s
 * in-memory queue and `@churn-risk/redis` both pass it.
 *
 * @example
 * import { describe, it } from 'vitest';
 * import { queueContract } from '@churn-risk/core/testing';
 *
 * queueContract({ describe, it }, {
 *   name: 'postgres',
 *   create: (scope) => createPostgresQueue({ pool, schema: `contract_${scope}` }),
 * });
 */
export function queueContract(test: ContractTestApi, options: QueueContractOptions): void {
  const timeout = options.timeoutMs ?? 30_000;
  let scopes = 0;
  const run = (name: string, body: (scope: string, open: Receiver[]) => Promise<void>): void => {
    test.it(
      name,
      async () => {
        const open: Receiver[] = [];
        try {
          await body(`case${String(++scopes)}_${Date.now().toString(36)}`, open);
        } finally {
          await Promise.all(open.map((receiver) => receiver.close({ timeoutMs: timeout })));
        }
      },
      timeout,
    );
  };
  const receiverOn = async (
    scope: string,
    open: Receiver[],
    retries = 0,
  ): Promise<{ receiver: Receiver; queue: AlertQueue }> => {
    const queue = await options.create(scope);
    const receiver = createReceiver({
      secret: SECRET,
      queue,
      retries: { retries, backoffMs: () => 5 },
    });
    open.push(receiver);
    return { receiver, queue };
  };

  test.describe(`queueContract: ${options.name}`, () => {
    run('accepts an alert (202) and runs each handler once, attempt 0', async (scope, open) => {
      const { receiver } = await receiverOn(scope, open);
      const seen: [string, number][] = [];
      receiver.on('churn_risk_alert', (_a, c: AlertContext) => void seen.push(['a', c.attempt]), {
        id: 'a',
      });
      receiver.on('churn_risk_alert', (_a, c: AlertContext) => void seen.push(['b', c.attempt]), {
        id: 'b',
      });
      const answer = await receiver.handle(delivery());
      same([answer.status, answer.body], [202, '{"received":true}'], 'the answer');
      await receiver.drain({ timeoutMs: timeout });
      same(
        seen.sort(),
        [
          ['a', 0],
          ['b', 0],
        ],
        'the handler runs',
      );
    });

    run('answers a redelivery as a duplicate and runs nothing', async (scope, open) => {
      const { receiver } = await receiverOn(scope, open);
      let runs = 0;
      receiver.on('churn_risk_alert', () => {
        runs++;
      });
      const request = delivery();
      same((await receiver.handle(request)).status, 202, 'the first answer');
      await receiver.drain({ timeoutMs: timeout });
      const again = await receiver.handle(request);
      same(JSON.parse(again.body), { received: true, duplicate: true }, 'the redelivery');
      await receiver.drain({ timeoutMs: timeout });
      same(runs, 1, 'handler runs');
    });

    run(
      'retries only the failed handler; one that succeeded is not run again',
      async (scope, open) => {
        const { receiver } = await receiverOn(scope, open, 2);
        const attempts: Record<string, number[]> = { ok: [], flaky: [] };
        receiver.on('churn_risk_alert', (_a, c) => void attempts.ok?.push(c.attempt), { id: 'ok' });
        receiver.on(
          'churn_risk_alert',
          (_a, c) => {
            attempts.flaky?.push(c.attempt);
            if (c.attempt < 2) throw new Error('not yet');
          },
          { id: 'flaky' },
        );
        const errors: unknown[] = [];
        receiver.onError((error) => void errors.push(error));
        await receiver.handle(delivery());
        await receiver.drain({ timeoutMs: timeout });
        same(attempts, { ok: [0], flaky: [0, 1, 2] }, 'the tries');
        same(errors.length, 0, 'onError calls');
      },
    );

    run(
      'after the last try calls onError once per failed handler and keeps the alert failed',
      async (scope, open) => {
        const { receiver, queue } = await receiverOn(scope, open, 1);
        let broken = true;
        let runs = 0;
        receiver.on('churn_risk_alert', () => undefined, { id: 'audit' });
        receiver.on(
          'churn_risk_alert',
          () => {
            runs++;
            if (broken) throw new Error('CRM down');
          },
          { id: 'crm' },
        );
        const reported: [string, number][] = [];
        receiver.onError((error, _alert, context) => {
          reported.push([error instanceof Error ? error.message : String(error), context.attempt]);
        });
        await receiver.handle(delivery());
        await receiver.drain({ timeoutMs: timeout });
        same(reported, [['CRM down', 1]], 'onError calls');
        same(receiver.stats.failed, 1, 'stats.failed');
        if (!hasFailedSet(queue)) return;
        const failed = await queue.failed();
        same(failed.length, 1, 'failed alerts listed');
        check(
          /crm/.test(failed[0]?.error ?? ''),
          `the failed entry names the handler: ${failed[0]?.error ?? ''}`,
        );
        broken = false;
        await queue.retry(failed[0]?.id ?? '');
        await receiver.drain({ timeoutMs: timeout });
        same(runs, 3, 'crm runs after retry(id)');
        same((await queue.failed()).length, 0, 'failed alerts after the retry');
      },
    );

    run('reports its store reachable, and after close answers 503 CLOSED', async (scope, open) => {
      const { receiver, queue } = await receiverOn(scope, open);
      receiver.on('churn_risk_alert', () => undefined);
      if (queue.health !== undefined) same((await queue.health()).reachable, true, 'reachable');
      await receiver.close({ timeoutMs: timeout });
      const answer = await receiver.handle(delivery());
      same(answer.status, 503, 'the status after close');
      const body = JSON.parse(answer.body) as { error?: { code?: string } };
      same(body.error?.code, 'CLOSED', 'the code after close');
      check(answer.headers['retry-after'] !== undefined, 'Retry-After is set');
    });
  });
}
