import type { AlertRecord, UserOrderKey } from '@churn-risk/core/store';

/** The BullMQ job name of an accepted alert. */
export const JOB_NAME = 'churn_risk_alert';
/** The BullMQ queue name under the prefix. */
export const QUEUE_NAME = 'alerts';

/**
 * What a job holds: the accepted alert and the numbers core computed for it. The store
 * writes them as core gives them and counts nothing of its own.
 */
export type AlertJobData = AlertRecord<'accepted'> & {
  /** Tries made (0 before the first), as core last wrote them. */
  tries: number;
  /** Ids of the handlers that succeeded in an earlier try: the next try skips exactly these. */
  succeeded: string[];
  /** How often a taker of the alert died, as core last wrote it (after a takeover). */
  stalls: number;
  /** When a retry of it falls due (`Date.now()` ms), written with the retry's delay. */
  dueAt?: number;
  /** The alert's user and time, for an alert accepted in order per user (`StoreAcceptOptions.order`). */
  order?: UserOrderKey;
  /**
   * For an alert that a completion went on with in its job (order per user): the attempts the job
   * had started before it, less one for its own hand-out, which BullMQ does not count.
   */
  startsBefore?: number;
};
