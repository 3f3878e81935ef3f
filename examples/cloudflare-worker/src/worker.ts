import { createWorker } from '@churn-risk/cloudflare';

/** The part of a KV namespace (`KVNamespace` in @cloudflare/workers-types) the handler uses. */
export interface AlertStore {
  put(key: string, value: string, options?: { expirationTtl?: number }): Promise<void>;
}

/** The worker's bindings (wrangler.toml and `wrangler secret put`). */
export interface Env {
  /** The webhook signing secret: `npx wrangler secret put CHURN_RISK_WEBHOOK_SECRET`. */
  CHURN_RISK_WEBHOOK_SECRET: string;
  /** Where the handler records each alert (a KV namespace, `[[kv_namespaces]]` in wrangler.toml). */
  ALERTS: AlertStore;
}

/**
 * Receives churn-risk alerts on any path (point the watch's webhook at the worker's URL). The
 * receiver answers `202` at once; the handler runs afterwards, kept alive by `ctx.waitUntil`.
 */
export default createWorker<Env>({
  secret: (env) => env.CHURN_RISK_WEBHOOK_SECRET,
  setup: (receiver, env) => {
    receiver.on('churn_risk_alert', async (alert, { id }) => {
      console.log(
        `${alert.userId} is at ${alert.tier} risk (${alert.score}): ${alert.recommendation}`,
      );
      await env.ALERTS.put(`alert:${id}`, JSON.stringify(alert), { expirationTtl: 30 * 24 * 3600 });
    });
  },
});
