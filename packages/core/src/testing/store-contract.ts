// `storeContract`, the back-end contract as test cases: the store case groups, then the
// receiver-level cases on two receivers that share one store through `createDurableQueue`.
import { createDurableQueue } from '../processing/durable/durable-queue.js';
import { deployCases } from './deploy-cases.js';
import { leaseCases } from './lease-cases.js';
import { orderCases } from './order-cases.js';
import { receiverCases } from './receiver-cases.js';
import type { ReceiverPlatform } from './receiver-platform.js';
import { retryCases } from './retry-cases.js';
import { retryRaceCases } from './retry-race-cases.js';
import { statusCases } from './status-cases.js';
import { storeCaseKit, type StoreContractOptions, type StoreFixture } from './store-fixture.js';
import type { ContractTestApi } from './support.js';
import { sweepCases } from './sweep-cases.js';

export type { StoreContractOptions } from './store-fixture.js';

/**
 * Registers the back-end contract as test cases: what every `AlertStore` must do so
 * that core's `createDurableQueue` loses no alert and runs no handler twice. Every case runs two
 * store instances on one back end (two processes). The store cases: atomic accept with dedupe,
 * exclusive take, takeover of an expired lease, fenced writes, delays, the record of succeeded
 * handlers across a failure and a retry, `retry` and `retryAll` (also several at once, and racing a
 * worker's take: each failed alert put back once), exact counts, health. Then the
 * receiver cases: two sweeps at once (`receiver.sweep`), a deploy between two tries of an alert
 * (the next release runs exactly the handlers not yet succeeded), and two receivers on one store,
 * end to end.
 *
 * @example
 * import { describe, it } from 'vitest';
 * import { storeContract } from '@churn-risk/core/testing';
 *
 * storeContract({ describe, it }, {
 *   name: 'postgres',
 *   create: (scope) => createPostgresStore({ connection: url, schema: `contract_${scope}` }),
 *   unreachable: () => createPostgresStore({ connection: 'postgres://127.0.0.1:1/none' }),
 * });
 */
export function storeContract(test: ContractTestApi, options: StoreContractOptions): void {
  const kit = storeCaseKit(test, options);
  test.describe(`storeContract: ${options.name}`, () => {
    leaseCases(kit);
    orderCases(kit);
    retryCases(kit);
    retryRaceCases(kit);
    statusCases(kit, () => options.unreachable());
    sweepCases(kit);
    deployCases(kit);
    // The receiver on top: two receivers (two processes) on one store, through createDurableQueue.
    receiverCases((name, body) => {
      kit.run(name, (fixture) => body(durablePlatform(fixture, kit.timeout), fixture.receivers));
    }, kit.timeout);
  });
}

/**
 * The case's store as a receiver platform: each `queue()` is one more process's
 * `createDurableQueue`, on the fixture's two instances in turn.
 */
function durablePlatform(fixture: StoreFixture, timeout: number): ReceiverPlatform {
  let next = 0;
  return {
    queue: () =>
      createDurableQueue(next++ % 2 === 0 ? fixture.a : fixture.b, {
        leaseMs: 10_000,
        pollIntervalMs: 20,
      }),
    settle: async (receivers) => {
      for (const receiver of receivers) await receiver.drain({ timeoutMs: timeout });
    },
    failed: () => fixture.a.failed(),
    retry: (id) => fixture.b.retry(id),
    close: () => Promise.resolve(),
  };
}
