/**
 * One side of `pnpm bench drain`: how a library stores an alert (its own enqueue) and how one
 * consuming process of it runs a no-op handler at concurrency 10. Each side lives in its own
 * module (`side-*.ts`), loaded only by the child processes that run it.
 */
import { alertBody } from '../lib/alert.js';
import { machineClock } from '../lib/clock.js';

/** Handlers run at once per consuming process, on every side. */
export const CONCURRENCY = 10;

/** What the alerts of the run carry: the alert, and when its enqueue was called. */
export interface StampedAlert {
  readonly userId: string;
  /** `machineClock()` just before the enqueue call, in ms. */
  readonly sentAt: number;
  readonly [field: string]: unknown;
}

/** Where a side's data lives: a Redis URL and key prefix, or a database URL and a schema. */
export interface SideTarget {
  url: string;
  namespace: string;
}

/** A producing process's enqueue: resolves once the library says the alert is stored. */
export interface Producer {
  enqueue(alert: StampedAlert): Promise<void>;
  /**
   * Deletes the alerts left waiting, with the library's own API (after a drain that hit the
   * time cap). A side without it fails at the cap.
   */
  purge?(): Promise<void>;
  close(): Promise<void>;
}

/** A prepared consuming process: connected, not yet taking alerts. */
export interface Consumer {
  /** Starts taking alerts (concurrency 10); the handler calls `onStart` first thing. */
  start(): Promise<void>;
  /** Stops taking alerts, lets the running handlers finish and closes (graceful). */
  close(): Promise<void>;
}

export interface Side {
  producer(target: SideTarget): Promise<Producer>;
  /** `onStart`: called by the handler, first thing, with the alert it was given. */
  consumer(target: SideTarget, onStart: (alert: StampedAlert) => void): Promise<Consumer>;
}

/** A fresh ~280-byte `churn_risk_alert` with a `sentAt` field (extra fields are kept). */
export function stampedAlert(): StampedAlert {
  const alert = JSON.parse(alertBody()) as { userId: string };
  return { ...alert, sentAt: machineClock() };
}

/** The alert identity `userId:triggeredAt`, the anchors' de-duplication key. */
export function identityOf(alert: StampedAlert): string {
  return `${alert.userId}:${String(alert.triggeredAt)}`;
}
