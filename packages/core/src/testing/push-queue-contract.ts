// `pushQueueContract`: the receiver-level cases against a push-based platform queue, then the
// platform's failed store.
import { NonRetryableError } from '../errors/non-retryable-error.js';
import { createReceiver } from '../create-receiver/create-receiver.js';
import type { Receiver } from '../receiver/types.js';
import { receiverCases } from './receiver-cases.js';
import type { ReceiverCase, ReceiverPlatform, RunReceiverCase } from './receiver-platform.js';
import { SECRET, delivery, queuedAlert, same, sleep, type ContractTestApi } from './support.js';

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
 * Then the platform's failed store: it lists the newest failure first.
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
