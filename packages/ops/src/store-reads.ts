import { type AlertRecord } from '@churn-risk/core';
import { withTimeout, type QueueCounts, type QueueHealth } from '@churn-risk/core/store';
import { OpsError } from './ops-error.js';
import type { ResolvedOptions } from './resolve-options.js';

/** The counts the page shows: every state where the store counts them, else the failed count. */
export type ShownCounts = Partial<QueueCounts> & {
  failed: number;
  /** Handler runs skipped for superseded alerts by the page's receiver, when it has one. */
  superseded?: number;
};

/** The store's state for the top of the page and `GET api/counts`. */
export interface StoreStatus {
  /** `undefined` when they could not be read. */
  counts: ShownCounts | undefined;
  health: QueueHealth;
  /** The back end's short name, when it has one. */
  kind: string | undefined;
}

/** A page of failed alerts, and whether there are older ones. */
export interface FailedPage {
  alerts: AlertRecord<'failed'>[];
  limit: number;
  offset: number;
  /** The offset of the next (older) page, or `null` on the last page. */
  next: number | null;
}

const UNREAD = 'The counts could not be read; see the server log.';

function storeUnavailable(what: string, cause: unknown): OpsError {
  return new OpsError(
    'STORE_UNAVAILABLE',
    503,
    `The store did not answer ${what}; see the server log.`,
    {
      cause,
    },
  );
}

/** Counts and health, each bounded by `timeoutMs`; a failure is reported, never thrown. */
export async function readStatus(options: ResolvedOptions): Promise<StoreStatus> {
  const { queue, timeoutMs, logError } = options;
  const bounded = <T>(promise: Promise<T>, what: string): Promise<T> =>
    withTimeout(promise, timeoutMs, `The store did not answer ${what}`);
  const counting = queue.counts
    ? bounded(queue.counts(), 'with the counts')
    : queue.count
      ? bounded(queue.count(), 'with the failed count').then((failed) => ({ failed }))
      : Promise.resolve(undefined);
  const [counts, health] = await Promise.allSettled([
    counting,
    queue.health ? bounded(queue.health(), 'the health check') : Promise.resolve(undefined),
  ]);
  if (counts.status === 'rejected')
    logError({ err: counts.reason }, 'ops: reading the counts failed');
  if (health.status === 'rejected')
    logError({ err: health.reason }, 'ops: reading the health failed');
  let read: ShownCounts | undefined = counts.status === 'fulfilled' ? counts.value : undefined;
  if (read !== undefined && options.receiver !== undefined) {
    read = { ...read, superseded: options.receiver.stats.superseded };
  }
  const reported =
    health.status === 'fulfilled'
      ? (health.value ?? (read !== undefined ? { reachable: true } : undefined))
      : { reachable: false, error: 'The store did not answer the health check in time.' };
  return {
    counts: read,
    health: reported ?? { reachable: false, error: UNREAD },
    kind: queue.kind,
  };
}

/** One page of failed alerts, newest first; `STORE_UNAVAILABLE` when the store fails. */
export async function readFailed(
  options: ResolvedOptions,
  page: { limit: number; offset: number },
): Promise<FailedPage> {
  const { queue, timeoutMs, logError } = options;
  let alerts: AlertRecord<'failed'>[];
  try {
    // One more than shown: whether there is an older page, without a count.
    alerts = await withTimeout(
      queue.failed({ limit: page.limit + 1, offset: page.offset }),
      timeoutMs,
      'The store did not list the failed alerts',
    );
  } catch (error) {
    logError({ err: error }, 'ops: listing the failed alerts failed');
    throw storeUnavailable('when asked for the failed alerts', error);
  }
  const more = alerts.length > page.limit;
  return {
    alerts: alerts.slice(0, page.limit),
    limit: page.limit,
    offset: page.offset,
    next: more ? page.offset + page.limit : null,
  };
}

/** Retries one alert, or all; resolves with how many were put back. */
export async function retryAlerts(
  options: ResolvedOptions,
  target: { id: string } | { all: true },
): Promise<number> {
  const { queue, timeoutMs, logError } = options;
  try {
    if ('all' in target)
      return await withTimeout(
        queue.retryAll(),
        timeoutMs * 6,
        'The store did not retry all alerts',
      );
    await withTimeout(queue.retry(target.id), timeoutMs, 'The store did not retry the alert');
    return 1;
  } catch (error) {
    if (error instanceof TypeError) {
      // The stores' answer to an id that is not failed (any more): retried by someone else.
      throw new OpsError(
        'NOT_FOUND',
        404,
        'No failed alert has this id (was it retried already?).',
      );
    }
    logError({ err: error }, 'ops: a retry failed');
    throw storeUnavailable('when asked to retry', error);
  }
}
