import { createReceiver, type ChurnRiskAlert, type Logger, type Receiver } from '@churn-risk/core';
import { createMiddleware } from '@churn-risk/express';
import express from 'express';
import { randomUUID } from 'node:crypto';
import { createAlertLog, type AlertLogOptions } from './alert-log.js';

/** Options of `createApp`. */
export interface AppOptions extends AlertLogOptions {
  /** The webhook signing secret (`CHURN_RISK_WEBHOOK_SECRET`). */
  secret: string;
  /** The receiver's logger, e.g. a pino instance (see docs/production.md). */
  logger?: Logger | undefined;
}

/** The app, its receiver (to drain on shutdown) and the alerts processed so far. */
export interface ExampleApp {
  app: express.Express;
  receiver: Receiver;
  alerts: ChurnRiskAlert[];
}

/** Builds the example app: a notes API with JSON parsing, plus the churn-risk webhook. */
export function createApp(options: AppOptions): ExampleApp {
  const receiver = createReceiver({
    secret: options.secret,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  const log = createAlertLog(options);
  receiver.on('churn_risk_alert', (alert) => log.record(alert));
  receiver.onError((error, alert) => {
    console.error(`alert ${alert.userId} failed after retries:`, error);
  });

  const app = express();
  // The webhook comes first: it needs the raw body, before express.json() parses it.
  // (With a global parser, use express.json({ verify: rawBodySaver }) instead.)
  app.post('/webhooks/churn-risk', createMiddleware(receiver));
  app.use(express.json());

  const notes: { id: string; text: string }[] = [];
  app.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });
  // Readiness: 200 while the receiver takes deliveries, 503 once it is closing (or its queue's
  // store stops answering), so that a load balancer stops sending webhooks here.
  app.get('/healthz', async (_req, res) => {
    const health = await receiver.health();
    res.status(health.ok ? 200 : 503).json(health);
  });
  app.get('/api/notes', (_req, res) => {
    res.json({ notes });
  });
  app.post('/api/notes', (req, res) => {
    const text = (req.body as { text?: unknown } | undefined)?.text;
    if (typeof text !== 'string' || text === '') {
      res.status(400).json({ error: 'text is required' });
      return;
    }
    const note = { id: randomUUID(), text };
    notes.push(note);
    res.status(201).json(note);
  });
  app.get('/alerts', (_req, res) => {
    res.json({ alerts: log.alerts });
  });

  return { app, receiver, alerts: log.alerts };
}
