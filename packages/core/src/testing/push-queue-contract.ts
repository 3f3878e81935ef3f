// `pushQueueContract`: the receiver-level cases against a push-based platform queue, then the
// platform's failed store.
import { NonRetryableError } from '../errors/non-retryable-error.js';
import { createReceiver } from '../create-receiver/create-receiver.js';
import type { AlertRecord } from '../queue-port/alert-queue.js';
import type { Receiver } from '../receiver/types.js';
import { alertOf } from './order-cases.js';
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
 * the platform gives `retryAll`) send each failed alert back once. Then order per user
 * (`createReceiver({ order: 'per-user' })`, the platform's `PushOrder`): two alerts of one user
 * never run at the same time, the oldest `triggeredAt` starts first whatever the order they were
 * accepted in, a retry keeps its user's place and a failed alert releases it, and an alert a
 * later one of its user superseded sees `context.supersededBy` (`superseded: 'skip'` handlers
 * skip it). The platform's `settle` must deliver the messages that are due side by side (as a
 * batch), so that two alerts of one user could run at once.
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
    pushOrderCases(run);
  });
}

let orderedUsers = 0;

/** A fresh user id for the order cases. */
function orderedUser(): string {
  return `push_ordered_${String(++orderedUsers)}_${Math.random().toString(36).slice(2, 8)}`;
}

/** A receiver in order per user on one more of the platform's queues. */
function orderedOn(platform: ReceiverPlatform, all: Receiver[], retries = 0): Receiver {
  const receiver = createReceiver({
    secret: SECRET,
    order: 'per-user',
    queue: platform.queue(),
    retries: { retries, backoffMs: () => 5 },
  });
  all.push(receiver);
  return receiver;
}

/** Delivers each alert, in the order given, to the receivers in turn. */
async function deliverAll(
  receivers: readonly Receiver[],
  alerts: readonly AlertRecord<'accepted'>[],
): Promise<void> {
  for (const [index, entry] of alerts.entries()) {
    const receiver = receivers[index % receivers.length] as Receiver;
    same((await receiver.handle(delivery(entry))).status, 202, `the answer to ${entry.id}`);
  }
}

/**
 * What the handlers of the order cases saw: each run's user and time, in the order they started,
 * and the runs of one user that overlapped.
 */
interface OrderLog {
  started: string[];
  overlaps: string[];
}

/** Registers on every receiver a handler that logs its runs into `log` and takes a while. */
function logRuns(receivers: readonly Receiver[], log: OrderLog): void {
  const running = new Map<string, string>();
  for (const receiver of receivers) {
    receiver.on('churn_risk_alert', async (alert, context) => {
      const other = running.get(alert.userId);
      if (other !== undefined) log.overlaps.push(`${other} and ${context.id}`);
      running.set(alert.userId, context.id);
      log.started.push(`${alert.userId}@${alert.triggeredAt}`);
      try {
        await sleep(10); // long enough for another run of the user to start, if one may
      } finally {
        running.delete(alert.userId);
      }
    });
  }
}

/** Order per user on the push platform (see `pushQueueContract`). */
function pushOrderCases(run: RunReceiverCase): void {
  run(
    'order per user: two alerts of one user never run at the same time',
    async (platform, all) => {
      const receivers = [orderedOn(platform, all), orderedOn(platform, all)];
      const log: OrderLog = { started: [], overlaps: [] };
      logRuns(receivers, log);
      const [u, v] = [orderedUser(), orderedUser()];
      // Oldest first, so that a platform that starts what is due in the order sent gets the order
      // right: what this case asks is that they do not run side by side.
      const alerts = [1, 2, 3, 4].flatMap((minute) => [alertOf(u, minute), alertOf(v, minute)]);
      await deliverAll(receivers, alerts);
      await platform.settle(all);
      same(log.overlaps, [], 'runs of one user at the same time');
      same(log.started.length, alerts.length, 'runs');
    },
  );

  run(
    "order per user: a user's oldest alert starts first, whatever the order of acceptance",
    async (platform, all) => {
      const receivers = [orderedOn(platform, all), orderedOn(platform, all)];
      const log: OrderLog = { started: [], overlaps: [] };
      logRuns(receivers, log);
      const u = orderedUser();
      const alerts = [4, 2, 3, 1].map((minute) => alertOf(u, minute));
      await deliverAll(receivers, alerts);
      await platform.settle(all);
      same(
        log.started,
        [1, 2, 3, 4].map((minute) => `${u}@${alertOf(u, minute).alert.triggeredAt}`),
        "the runs of the user's alerts",
      );
      same(log.overlaps, [], 'runs of one user at the same time');
    },
  );

  run(
    'order per user: a retry keeps its user; a failed alert releases it at once',
    async (platform, all) => {
      const receivers = [orderedOn(platform, all, 1), orderedOn(platform, all, 1)];
      const u = orderedUser();
      const [first, second, third] = [1, 2, 3].map((minute) => alertOf(u, minute));
      const runs: string[] = [];
      const errors: string[] = [];
      for (const receiver of receivers) {
        receiver.on('churn_risk_alert', (alert, context) => {
          const name = [first, second, third].findIndex(
            (entry) => entry?.alert.triggeredAt === alert.triggeredAt,
          );
          runs.push(`${String(name + 1)}@${String(context.attempt)}`);
          // The first fails once (a retry), the second for good, the third succeeds.
          if (name === 0 && context.attempt === 0) throw new Error('CRM down');
          if (name === 1) throw new NonRetryableError('no such account');
        });
        receiver.onError(
          (error) => void errors.push(error instanceof Error ? error.message : String(error)),
        );
      }
      await deliverAll(
        receivers,
        [third, second, first].filter((x) => x !== undefined),
      );
      await platform.settle(all);
      same(runs, ['1@0', '1@1', '2@0', '3@0'], 'the runs (alert@attempt)');
      same(errors, ['no such account'], 'onError');
      same(
        (await platform.failed()).map((failed) => failed.alert.triggeredAt),
        [second?.alert.triggeredAt],
        'the failed alerts',
      );
    },
  );

  run(
    'order per user: an alert is superseded when a later one of its user was accepted',
    async (platform, all) => {
      const receivers = [orderedOn(platform, all), orderedOn(platform, all)];
      const u = orderedUser();
      const [older, newer] = [alertOf(u, 1), alertOf(u, 2)];
      const seen: [string, string | undefined][] = [];
      const written: string[] = [];
      for (const receiver of receivers) {
        receiver.on(
          'churn_risk_alert',
          (alert, context) => void seen.push([alert.triggeredAt, context.supersededBy]),
          { id: 'audit' },
        );
        receiver.on('churn_risk_alert', (alert) => void written.push(alert.triggeredAt), {
          id: 'crm',
          superseded: 'skip',
        });
      }
      await deliverAll(receivers, [older, newer]);
      await platform.settle(all);
      same(
        seen,
        [
          [older.alert.triggeredAt, newer.alert.triggeredAt],
          [newer.alert.triggeredAt, undefined],
        ],
        'the runs and their context.supersededBy',
      );
      same(written, [newer.alert.triggeredAt], "the runs of the 'skip' handler");
      same(
        receivers.reduce((sum, receiver) => sum + receiver.stats.superseded, 0),
        1,
        'stats.superseded',
      );
    },
  );
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
