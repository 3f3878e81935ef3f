import { randomUUID } from 'node:crypto';
import type { ChurnRiskAlert } from '@churn-risk/core';
import type { SandboxClock, TimerHandle } from '../clock/clock.js';
import { nextTryAt } from './retry-schedule.js';
import {
  describeError,
  sendAttempt,
  type DeliveryAttempt,
  type SendAttemptOptions,
} from './send-attempt.js';

/** The state of a delivery: `pending` until a 2xx answer (`delivered`) or the 72 h window ends (`failed`). */
export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** One entry of the delivery log (`GET /v1/deliveries`). */
export interface DeliveryRecord {
  id: string;
  alert: ChurnRiskAlert;
  webhook: string;
  attempts: DeliveryAttempt[];
  state: DeliveryState;
  /** When the next try is due, ISO 8601 UTC; `null` once delivered or failed. */
  nextAttemptAt: string | null;
}

/** The deliveries of a sandbox: the log, and ways for tests to wait on it. */
export interface Deliveries {
  /** Starts delivering an alert (first try at once) and returns its log entry. */
  enqueue(alert: ChurnRiskAlert, webhook: string): DeliveryRecord;
  /** Every delivery, oldest first (copies: changing them changes nothing). */
  list(): DeliveryRecord[];
  /** One delivery by id. */
  get(id: string): DeliveryRecord | undefined;
  /**
   * Resolves when no try is in flight: each delivery is then delivered, failed, or waiting for its
   * next try's timer (advance a manual clock to run it).
   */
  idle(): Promise<void>;
  /** Stops every timer, aborts tries in flight and waits for them; pending deliveries stay pending. */
  close(): Promise<void>;
}

/** Options of `createDeliveries`. */
export interface DeliveriesOptions {
  clock: SandboxClock;
  secret: string;
  timeoutMs: number;
  /** Called after every try, e.g. to print it. */
  onAttempt?: (record: DeliveryRecord, attempt: DeliveryAttempt) => void;
  /** Sends one try; default `sendAttempt`. Injectable for tests. */
  send?: (options: SendAttemptOptions) => Promise<DeliveryAttempt>;
}

interface Entry {
  record: DeliveryRecord;
  body: string;
  firstAt: number;
  plannedAt: number;
  timer?: TimerHandle;
}

const copy = (record: DeliveryRecord): DeliveryRecord => structuredClone(record);

/** Creates the delivery log and its retry scheduler. */
export function createDeliveries(options: DeliveriesOptions): Deliveries {
  const { clock } = options;
  const send = options.send ?? sendAttempt;
  const entries = new Map<string, Entry>();
  const inFlight = new Set<Promise<void>>();
  const closing = new AbortController();
  let waiters: (() => void)[] = [];

  const settleWaiters = (): void => {
    if (inFlight.size > 0) return;
    const ready = waiters;
    waiters = [];
    for (const resolve of ready) resolve();
  };

  const finish = (entry: Entry, attempt: DeliveryAttempt): void => {
    const { record } = entry;
    record.attempts.push(attempt);
    const ok = attempt.status !== undefined && attempt.status >= 200 && attempt.status < 300;
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
    try {
      options.onAttempt?.(copy(record), { ...attempt });
    } catch {
      // An observer's failure never stops deliveries.
    }
  };

  const run = (entry: Entry): void => {
    delete entry.timer;
    if (closing.signal.aborted) return;
    const startedAt = clock.now();
    // A try that throws (synchronously or not, for any reason) is a failed try, retried like a
    // network error: never an unhandled rejection.
    const sending = Promise.resolve()
      .then(() =>
        send({
          webhook: entry.record.webhook,
          body: entry.body,
          secret: options.secret,
          clock,
          timeoutMs: options.timeoutMs,
          signal: closing.signal,
        }),
      )
      .catch((error: unknown): DeliveryAttempt => ({
        at: new Date(startedAt).toISOString(),
        error: describeError(error),
        durationMs: clock.now() - startedAt,
      }))
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
      });
    const tracked = sending.finally(() => {
      inFlight.delete(tracked);
      settleWaiters();
    });
    inFlight.add(tracked);
  };

  return {
    enqueue(alert, webhook) {
      const now = clock.now();
      const record: DeliveryRecord = {
        id: `dlv_${randomUUID()}`,
        alert,
        webhook,
        attempts: [],
        state: 'pending',
        nextAttemptAt: new Date(now).toISOString(),
      };
      const entry: Entry = { record, body: JSON.stringify(alert), firstAt: now, plannedAt: now };
      entries.set(record.id, entry);
      run(entry);
      return copy(record);
    },
    list: () => [...entries.values()].map((entry) => copy(entry.record)),
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
