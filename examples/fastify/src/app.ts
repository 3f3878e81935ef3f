import { createReceiver, type ChurnRiskAlert, type Receiver } from '@churn-risk/core';
import { churnRiskPlugin } from '@churn-risk/fastify';
import Fastify, { type FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import { createAlertLog, type AlertLogOptions } from './alert-log.js';

/** Options of `createApp`. */
export interface AppOptions extends AlertLogOptions {
  /** The webhook signing secret (`CHURN_RISK_WEBHOOK_SECRET`). */
  secret: string;
}

/** The app, its receiver and the alerts processed so far. */
export interface ExampleApp {
  app: FastifyInstance;
  receiver: Receiver;
  alerts: ChurnRiskAlert[];
}

/** Builds the example app: a notes API with Fastify's JSON parsing, plus the churn-risk webhook. */
export async function createApp(options: AppOptions): Promise<ExampleApp> {
  const receiver = createReceiver({ secret: options.secret });
  const log = createAlertLog(options);
  receiver.on('churn_risk_alert', (alert) => log.record(alert));
  receiver.onError((error, alert) => {
    console.error(`alert ${alert.userId} failed after retries:`, error);
  });

  const app = Fastify();
  const notes: { id: string; text: string }[] = [];
  app.get('/health', () => ({ status: 'ok' }));
  // Readiness: 200 while the receiver takes deliveries, 503 once it is closing (or its queue's
  // store stops answering), so that a load balancer stops sending webhooks here.
  app.get('/healthz', async (_request, reply) => {
    const health = await receiver.health();
    return reply.code(health.ok ? 200 : 503).send(health);
  });
  app.get('/api/notes', () => ({ notes }));
  app.post<{ Body: { text?: unknown } | undefined }>('/api/notes', async (request, reply) => {
    const text = request.body?.text;
    if (typeof text !== 'string' || text === '') {
      return reply.code(400).send({ error: 'text is required' });
    }
    const note = { id: randomUUID(), text };
    notes.push(note);
    return reply.code(201).send(note);
  });
  app.get('/alerts', () => ({ alerts: log.alerts }));

  // The plugin parses its own route's body as raw bytes, in its own scope: the routes above keep
  // Fastify's JSON parser. app.close() drains the receiver (in-flight alerts finish).
  await app.register(churnRiskPlugin, { receiver, path: '/webhooks/churn-risk' });
  return { app, receiver, alerts: log.alerts };
}
