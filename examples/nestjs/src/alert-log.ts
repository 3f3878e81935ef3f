import { appendFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import type { ChurnRiskAlert } from '@churn-risk/core';

/** Where processed alerts go: memory (served at `GET /alerts`) and, optionally, a file. */
export interface AlertLogOptions {
  /** Append one line per processed alert to this file (the shutdown test reads it). */
  alertLogFile?: string | undefined;
  /** Pretend the handler does slow work (a CRM call, an e-mail) for this many milliseconds. */
  workMs?: number | undefined;
}

/** The in-memory alert list and the handler that fills it. */
export interface AlertLog {
  readonly alerts: readonly ChurnRiskAlert[];
  record(alert: ChurnRiskAlert): Promise<void>;
}

/** Creates an alert log; `record` prints `processing <userId>` and `processed <userId>`. */
export function createAlertLog(options: AlertLogOptions = {}): AlertLog {
  const alerts: ChurnRiskAlert[] = [];
  return {
    alerts,
    async record(alert) {
      console.log(`processing ${alert.userId}`);
      if (options.workMs !== undefined && options.workMs > 0) await delay(options.workMs);
      alerts.push(alert);
      if (options.alertLogFile !== undefined) {
        await appendFile(options.alertLogFile, `processed ${alert.userId}\n`);
      }
      console.log(`processed ${alert.userId}`);
    },
  };
}
