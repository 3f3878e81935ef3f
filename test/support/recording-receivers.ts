import { createReceiver, type Receiver } from '@churn-risk/core';

/** Receivers that record the user ids of the alerts they processed, closed together after a test. */
export interface RecordingReceivers {
  /** A receiver (no handler retries) and the user ids it has processed so far. */
  create(maxBodyBytes?: number): { receiver: Receiver; seen: string[] };
  /** Closes (drains) every receiver created since the last call. */
  closeAll(): Promise<void>;
}

/** Creates the recorder an adapter's own tests use; call `closeAll()` in `afterEach`. */
export function createRecordingReceivers(secret: string): RecordingReceivers {
  const open: Receiver[] = [];
  return {
    create(maxBodyBytes) {
      const receiver = createReceiver({
        secret,
        retries: 0,
        ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }),
      });
      open.push(receiver);
      const seen: string[] = [];
      receiver.on('churn_risk_alert', (alert) => {
        seen.push(alert.userId);
      });
      return { receiver, seen };
    },
    async closeAll() {
      await Promise.all(open.splice(0).map((receiver) => receiver.close({ timeoutMs: 5000 })));
    },
  };
}
