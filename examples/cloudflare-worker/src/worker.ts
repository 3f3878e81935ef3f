import { createQueueWorker, type D1Database, type QueueProducer } from '@churn-risk/cloudflare';

/** The part of a KV namespace (`KVNamespace` in @cloudflare/workers-types) the handler uses. */
export interface AlertStore {
  put(
    key: string,
    value: string,
    options?: { expirationTtl?: number; metadata?: Record<string, unknown> },
  ): Promise<void>;
}

/** The worker's bindings (wrangler.toml and `wrangler secret put`). */
export interface Env {
  /** The webhook signing secret: `npx wrangler secret put CHURN_RISK_WEBHOOK_SECRET`. */
  CHURN_RISK_WEBHOOK_SECRET: string;
  /** The Queue's producer binding (`[[queues.producers]]`). */
  CHURN_RISK_ALERTS: QueueProducer;
  /** Identities and failed alerts (`[[d1_databases]]`). */
  CHURN_RISK_DB: D1Database;
  /** Where the first handler records each alert (`[[kv_namespaces]]`). */
  ALERTS: AlertStore;
  /** The CRM's webhook, where the second handler creates a task (`[vars]`). */
  CRM_WEBHOOK_URL: string;
  /** Where onError reports an alert whose handlers failed after their retries (`[vars]`). */
  OPS_WEBHOOK_URL: string;
}

const postJson = (url: string, body: unknown): Promise<Response> =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/**
 * Receives churn-risk alerts on any path (point the watch's webhook at the worker's URL). Queue
 * mode: the receiver sends each alert to the Queue before it answers `202`, and the `queue`
 * handler runs the handlers, in an invocation of its own: a retry is a new message sent with the
 * delay, carrying which handlers already succeeded, and after the last try the alert is kept in
 * D1 and `onError` runs once.
 */
export default createQueueWorker<Env>({
  secret: (env) => env.CHURN_RISK_WEBHOOK_SECRET,
  queue: (env) => env.CHURN_RISK_ALERTS,
  dedupe: (env) => env.CHURN_RISK_DB,
  deadLetterQueue: 'churn-risk-alerts-failed',
  setup: (receiver, env) => {
    receiver.on(
      'churn_risk_alert',
      async (alert, { id, attempt }) => {
        console.log(`${alert.userId} is at ${alert.tier} risk (${alert.score})`);
        await env.ALERTS.put(`alert:${id}`, JSON.stringify(alert), {
          expirationTtl: 30 * 24 * 3600,
          metadata: { attempt },
        });
      },
      { id: 'store' },
    );
    receiver.on(
      'churn_risk_alert',
      async (alert, { id, attempt }) => {
        const answer = await postJson(env.CRM_WEBHOOK_URL, {
          alertId: id,
          attempt,
          userId: alert.userId,
          tier: alert.tier,
          recommendation: alert.recommendation,
        });
        await answer.body?.cancel();
        if (!answer.ok) throw new Error(`The CRM answered ${String(answer.status)}`);
      },
      { id: 'crm' },
    );
    receiver.onError(async (error, alert, { id }) => {
      const message = error instanceof Error ? error.message : String(error);
      await postJson(env.OPS_WEBHOOK_URL, { alertId: id, userId: alert.userId, error: message });
    });
  },
});
