import {
  Inject,
  Module,
  RequestMethod,
  type BeforeApplicationShutdown,
  type DynamicModule,
  type MiddlewareConsumer,
  type NestModule,
} from '@nestjs/common';
import type { Receiver } from '@churn-risk/core';
import { createMiddleware } from '@churn-risk/express';
import { AlertsController } from './alerts.controller.js';
import { churnRiskProviders, type AppOptions } from './churn-risk.providers.js';
import { HealthController } from './health.controller.js';
import { NotesController } from './notes.controller.js';
import { CHURN_RISK_RECEIVER } from './tokens.js';

/** Where the churn-risk service sends its alerts. */
export const WEBHOOK_PATH = 'webhooks/churn-risk';

/**
 * The example app: the notes API, health routes and the churn-risk webhook. Create it with
 * `NestFactory.create(AppModule.forRoot(options), { rawBody: true })`: Nest's JSON parser runs
 * before any route middleware and keeps the raw bytes on `req.rawBody`, which
 * `@churn-risk/express` verifies the signature over.
 */
@Module({})
export class AppModule implements NestModule, BeforeApplicationShutdown {
  constructor(@Inject(CHURN_RISK_RECEIVER) private readonly receiver: Receiver) {}

  /** The module with its options (the secret, the alert log's settings). */
  static forRoot(options: AppOptions): DynamicModule {
    return {
      module: AppModule,
      controllers: [NotesController, HealthController, AlertsController],
      providers: churnRiskProviders(options),
    };
  }

  /** Mounts the webhook: `@churn-risk/express` answers POST /webhooks/churn-risk itself. */
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(createMiddleware(this.receiver))
      .forRoutes({ path: WEBHOOK_PATH, method: RequestMethod.POST });
  }

  /**
   * On SIGTERM/SIGINT (`app.enableShutdownHooks()`), before Nest closes the server: deliveries
   * that still arrive get 503 CLOSED (the service retries them), and alerts already accepted
   * finish their handlers.
   */
  async beforeApplicationShutdown(signal?: string): Promise<void> {
    console.log(`${signal ?? 'close'}: shutting down`);
    await this.receiver.close({ timeoutMs: 30_000 });
    console.log('drained');
  }
}
