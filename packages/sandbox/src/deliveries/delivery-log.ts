import { setMaxListeners } from 'node:events';
import { randomUUID } from 'node:crypto';
import type { ChurnRiskAlert } from '@churn-risk/core';
import { createChaos, type Chaos } from '../chaos/chaos.js';
import type { SandboxClock, TimerHandle } from '../clock/clock.js';
import { matchesFilter } from './delivery-filter.js';
import type { Deliveries, DeliveryRecord } from './delivery-record.js';
import { nextTryAt } from './retry-schedule.js';
import { sendAttempt, type DeliveryAttempt, type SendAttemptOptions } from './send-attempt.js';
import { createTrySender } from './send-try.js';

/** Options of `createDeliveries`. */
export interface DeliveriesOptions {
  clock: SandboxClock;
  secret: string;
  timeoutMs: number;
  /** Called after every try, e.g. to print it. */
  onAttempt?: (record: DeliveryRecord, attempt: DeliveryAttempt) => void;
  /** Sends one try; default `sendAttempt`. Injectable for tests. */
  send?: (options: SendAttemptOptions) => Promise<DeliveryAttempt>;
  /** Duplicates, delays and bad signatures; default none. */
  chaos?: Chaos;
}

interface Entry {
  record: DeliveryRecord;
  body: string;
  firstAt: number;
  plannedAt: number;
  timer?: TimerHandle;
}

const copy = (record: DeliveryRecord): DeliveryRecord => structuredClone(record);
const isOk = (attempt: DeliveryAttempt): boolean =>
  attempt.status !== undefined && attempt.status >= 200 && attempt.status < 300;

/** Creates the delivery log and its retry scheduler. */
export function createDeliveries(options: DeliveriesOptions): Deliveries {
  const { clock } = options;
  const chaos = options.chaos ?? createChaos();
  const entries = new Map<string, Entry>();
  const inFlight = new Set<Promise<void>>();
  const closing = new AbortController();
  // Every try in flight listens for the close (and stops listening when it ends): any number of
  // concurrent tries is expected, not a leak.
  setMaxListeners(0, closing.signal);
  let waiters: (() => void)[] = [];

  const settleWaiters = (): void => {
    if (inFlight.size > 0) return;
    const ready = waiters;
    waiters = [];
    for (const resolve of ready) resolve();
  };

  const track = (work: Promise<void>): void => {
    const tracked = work.finally(() => {
      inFlight.delete(tracked);
      settleWaiters();
    });
    inFlight.add(tracked);
  };

  const report = (record: DeliveryRecord, attempt: DeliveryAttempt): void => {
    try {
      options.onAttempt?.(copy(record), { ...attempt });
    } catch {
      // An observer's failure never stops deliveries.
    }
  };

  const sendTry = createTrySender({
    send: options.send ?? sendAttempt,
    chaos,
    clock,
    secret: options.secret,
    timeoutMs: options.timeoutMs,
    signal: closing.signal,
  });

  const finish = (entry: Entry, attempt: DeliveryAttempt): void => {
    const { record } = entry;
    record.attempts.push(attempt);
    const ok = isOk(attempt);
    const next = ok ? undefined : nextTryAt(entry.firstAt, entry.plannedAt, record.attempts.length);
    if (ok) record.state = 'delivered';
    else if (next === undefined) record.state = 'failed';
    record.nextAttemptAt = next === undefined ? null : new Date(next).toISOString();
    if (next !== undefined && !closing.signal.aborted) {
      entry.plannedAt = next;
      entry.timer = clock.setTimeout(() => {
        run(entry);
      }, next - clock.now());
    }
    report(record, attempt);
    if (ok && !closing.signal.aborted && chaos.duplicate()) {
      const signedAt = Date.parse(attempt.at);
      track(
        sendTry({ webhook: record.webhook, body: entry.body }, signedAt).then((duplicate) => {
          record.attempts.push(duplicate);
          report(record, duplicate);
        }),
      );
    }
  };

  const run = (entry: Entry): void => {
    delete entry.timer;
    if (closing.signal.aborted) return;
    track(
      sendTry({ webhook: entry.record.webhook, body: entry.body })
        .then((attempt) => {
          finish(entry, attempt);
        })
        .catch(() => {
          // Only scheduling the next try can fail here (the injected clock threw): with no timer
          // left, the delivery cannot go on, so it is marked failed rather than left pending.
          if (entry.record.state === 'pending' && entry.timer === undefined) {
            entry.record.state = 'failed';
            entry.record.nextAttemptAt = null;
          }
        }),
    );
  };

  const start = (alert: ChurnRiskAlert, body: string, webhook: string, replayOf?: string) => {
    const now = clock.now();
    const record: DeliveryRecord = {
      id: `dlv_${randomUUID()}`,
      alert,
      webhook,
      attempts: [],
      state: 'pending',
      nextAttemptAt: new Date(now).toISOString(),
      ...(replayOf !== undefined && { replayOf }),
    };
    const entry: Entry = { record, body, firstAt: now, plannedAt: now };
    entries.set(record.id, entry);
    run(entry);
    return copy(record);
  };

  return {
    enqueue: (alert, webhook) => start(alert, JSON.stringify(alert), webhook),
    replay(id) {
      const original = entries.get(id);
      if (!original) return undefined;
      const { record, body } = original;
      return start(structuredClone(record.alert), body, record.webhook, id);
    },
    list: (filter = {}) =>
      [...entries.values()]
        .filter((entry) => matchesFilter(entry.record, filter))
        .map((entry) => copy(entry.record)),
    get(id) {
      const entry = entries.get(id);
      return entry && copy(entry.record);
    },
    idle: () =>
      new Promise<void>((resolve) => {
        waiters.push(resolve);
        settleWaiters();
      }),
    async close() {
      closing.abort();
      for (const entry of entries.values()) {
        if (entry.timer !== undefined) clock.clearTimeout(entry.timer);
        delete entry.timer;
      }
      await Promise.allSettled([...inFlight]);
    },
  };
}
