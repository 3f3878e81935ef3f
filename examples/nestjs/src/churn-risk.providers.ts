import type { Provider } from '@nestjs/common';
import { createReceiver, type Logger, type Receiver } from '@churn-risk/core';
import { createAlertLog, type AlertLog, type AlertLogOptions } from './alert-log.js';
import { ALERT_LOG, APP_OPTIONS, CHURN_RISK_RECEIVER } from './tokens.js';

/** Options of `AppModule.forRoot`. */
export interface AppOptions extends AlertLogOptions {
  /** The webhook signing secret (`CHURN_RISK_WEBHOOK_SECRET`). */
  secret: string;
  /** The receiver's logger, e.g. a pino instance (see docs/production.md). */
  logger?: Logger | undefined;
}

/** Builds the receiver once for the app and registers its handlers. */
function createExampleReceiver(options: AppOptions, log: AlertLog): Receiver {
  const receiver = createReceiver({
    secret: options.secret,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  receiver.on('churn_risk_alert', (alert) => log.record(alert));
  receiver.onError((error, alert) => {
    console.error(`alert ${alert.userId} failed after retries:`, error);
  });
  return receiver;
}

/** The options, the alert log and the receiver, as Nest providers. */
export function churnRiskProviders(options: AppOptions): Provider[] {
  return [
    { provide: APP_OPTIONS, useValue: options },
    {
      provide: ALERT_LOG,
      useFactory: (appOptions: AppOptions) => createAlertLog(appOptions),
      inject: [APP_OPTIONS],
    },
    {
      provide: CHURN_RISK_RECEIVER,
      useFactory: createExampleReceiver,
      inject: [APP_OPTIONS, ALERT_LOG],
    },
  ];
}
