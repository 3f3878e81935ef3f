// `pushQueueContract`: the receiver-level cases against a push-based platform queue, then the
// platform's failed store.
import { NonRetryableError } from '../errors/non-retryable-error.js';
import { createReceiver } from '../create-receiver/create-receiver.js';
import type { Receiver } from '../receiver/types.js';
import { receiverCases } from './receiver-cases.js';
import type { ReceiverCase, ReceiverPlatform, RunReceiverCase } from './receiver-platform.js';
import {
  ContractError,
  SECRET,
  delivery,
  queuedAlert,
  same,
  sleep,
  type ContractTestApi,
} from './support.js';

/** What `pushQueueContract` runs against. */
export interface PushQueueContractOptions {
  /** The back end's name, in the suite's title. */
  name: string;
  /** A fresh shared back end for the case named `scope`; other scopes never see its alerts. */
  create(scope: string): ReceiverPlatform | Promise<ReceiverPlatform>;
  /** Milliseconds each case may take. Default 30,000. */
  timeoutMs?: number;
}

/**
 * Registers `storeContract`'s receiver-level cases against a queue that is not an `AlertStore`:
 * a push-based platform queue (Cloudflare Queues) run through `createPushQueue`. Two receivers
 * (two isolates) share one platform; the cases: two concurrent deliveries of one alert run its
 * handler once; only the failed handler is retried, in either receiver; after the last try
 * `onError` once per failed handler, and `retry(id)` runs it again; a `NonRetryableError` or
 * `shouldRetry` answering false ends the tries at once; health, and `503 CLOSED` after close.
 * Then the platform's failed store: it lists the newest failure first, and retries at once (where
 * the platform gives `retryAll`) send each failed alert back once.
 *
 * @example
 * pushQueueContract({ describe, it }, { name: 'cloudflare-queues', create: (scope) => platformFor(scope) });
 */
export function pushQueueContract(test: ContractTestApi, options: PushQueueContractOptions): void {
  const timeout = options.timeoutMs ?? 30_000;
  let scopes = 0;
  const run = (name: string, body: ReceiverCase): void => {
    test.it(
      name,
      async () => {
        const scope = `case${String(++scopes)}_${Date.now().toString(36)}`;
        const platform = await options.create(scope);
        const receivers: Receiver[] = [];
        try {
          await body(platform, receivers);
        } finally {
          await Promise.all(receivers.map((r) => r.close({ timeoutMs: timeout })));
          await platform.close();
        }
      },
      timeout,
    );
  };
  test.describe(`pushQueueContract: ${options.name}`, () => {
    receiverCases(run, timeout);
    failedStoreCases(run);
    failedRetryRaceCases(run);
  });
}

/** The push platform's failed store, as `failed()` lists it. */
function failedStoreCases(run: RunReceiverCase): void {
  run('failed store: lists the newest failure first', async (platform, all) => {
    const receiver = createReceiver({ secret: SECRET, queue: platform.queue(), retries: 0 });
    all.push(receiver);
    receiver.on('churn_risk_alert', () => {
      throw new NonRetryableError('CRM down');
    });
    const earlier = queuedAlert();
    const later = queuedAlert();
    same((await receiver.handle(delivery(earlier))).status, 202, 'the first answer');
    await platform.settle(all);
    await sleep(5); // a store that keeps failure times in milliseconds tells the two apart
    same((await receiver.handle(delivery(later))).status, 202, 'the second answer');
    await platform.settle(all);
    same(
      (await platform.failed()).map((failed) => failed.alert.userId),
      [later.alert.userId, earlier.alert.userId],
      'failed(): the later failure first',
    );
  });
}

/** Retries of the push platform's failed store at once: each failed alert is sent back once. */
function failedRetryRaceCases(run: RunReceiverCase): void {
  run('failed store: retries at once send each failed alert back once', async (platform, all) => {
    if (platform.retryAll === undefined) return;
    const retryAll = (): Promise<number> => platform.retryAll?.() ?? Promise.resolve(0);
    const receiver = createReceiver({ secret: SECRET, queue: platform.queue(), retries: 0 });
    all.push(receiver);
    const runs = new Map<string, number>();
    receiver.on('churn_risk_alert', (alert) => {
      runs.set(alert.userId, (runs.get(alert.userId) ?? 0) + 1);
      throw new NonRetryableError('CRM down');
    });
    const alerts = Array.from({ length: 6 }, queuedAlert);
    for (const alert of alerts) {
      same((await receiver.handle(delivery(alert))).status, 202, 'the answer');
    }
    await platform.settle(all);
    const failed = await platform.failed();
    same(failed.length, alerts.length, 'failed alerts');
    const [alls, singles] = await Promise.all([
      Promise.allSettled(Array.from({ length: 4 }, retryAll)),
      Promise.allSettled(failed.flatMap((f) => [platform.retry(f.jobId), platform.retry(f.jobId)])),
    ]);
    let sent = 0;
    for (const result of alls) {
      if (result.status === 'rejected') throw new ContractError('a retryAll() rejected');
      sent += result.value;
    }
    for (const result of singles) {
      if (result.status === 'fulfilled') sent++;
      else if (!(result.reason instanceof TypeError)) throw new ContractError('a retry() failed');
    }
    same(sent, alerts.length, 'alerts sent back (retry calls + retryAll counts)');
    await platform.settle(all);
    same(
      alerts.map((alert) => runs.get(alert.alert.userId)),
      alerts.map(() => 2),
      'runs of each alert (its first try, then once after the retries)',
    );
    same((await platform.failed()).length, alerts.length, 'failed alerts after the retries');
  });
}
