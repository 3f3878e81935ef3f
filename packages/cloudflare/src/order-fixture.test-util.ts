import { post } from './fixture-recorder.test-util.js';
import { createQueueWorker, type D1Database, type QueueProducer } from './index.js';

/**
 * The queue mode worker in order per user that order.workerd.test.ts bundles and runs in workerd,
 * on miniflare's Queues and D1. Its handler reports each run's start and end to the recorder
 * (`/start/<userId>`, `/end/<userId>`, in this order for each run, so that the recorder sees two
 * runs of a user overlap), with the alert's time, the attempt and `context.supersededBy`; a
 * handler registered with `superseded: 'skip'` reports `/write/<userId>`. By the alert's user:
 * - `hold_`: the alert triggered at minute 0 fails its first try, and holds its user through
 *   the retry's delay (3 s) while the user's later alerts arrive;
 * - `retry_`: the alert triggered at minute 1 fails its first try.
 * (miniflare's Queues deliver one batch at a time, so no handler may wait for another message.)
 * The Queue's producer reports each alert sent again to wait for its user (`/postponed/<userId>`).
 */
interface Env {
  CHURN_RISK_WEBHOOK_SECRET: string;
  RECORDER_URL: string;
  ALERTS: QueueProducer;
  DB: D1Database;
}

/** The Queue's producer, reporting the sends of postponed alerts. */
function reporting(queue: QueueProducer, recorder: string): QueueProducer {
  return {
    async send(body, options) {
      const sent = body as { entry?: { alert?: { userId?: string } }; postponements?: number };
      await queue.send(body, options);
      if ((sent.postponements ?? 0) > 0) {
        await post(`${recorder}/postponed/${String(sent.entry?.alert?.userId)}`, {
          postponements: sent.postponements,
          delaySeconds: options?.delaySeconds,
        });
      }
    },
  };
}

export default createQueueWorker<Env>({
  secret: (env) => env.CHURN_RISK_WEBHOOK_SECRET,
  order: 'per-user',
  queue: (env) => reporting(env.ALERTS, env.RECORDER_URL),
  dedupe: (env) => env.DB,
  deadLetterQueue: 'alerts-dlq',
  retries: { retries: 2, backoffMs: () => 3_000 },
  setup: (receiver, env) => {
    receiver.on(
      'churn_risk_alert',
      async (alert, context) => {
        const user = alert.userId;
        const minute = new Date(alert.triggeredAt).getUTCMinutes();
        const at = alert.triggeredAt;
        await post(`${env.RECORDER_URL}/start/${user}`, {
          at,
          attempt: context.attempt,
          supersededBy: context.supersededBy ?? null,
        });
        try {
          const fails =
            (user.startsWith('hold_') && minute === 0) ||
            (user.startsWith('retry_') && minute === 1);
          if (fails && context.attempt === 0) throw new Error('CRM down');
        } finally {
          await post(`${env.RECORDER_URL}/end/${user}`, { at });
        }
      },
      { id: 'audit' },
    );
    receiver.on(
      'churn_risk_alert',
      async (alert) => {
        await post(`${env.RECORDER_URL}/write/${alert.userId}`, { at: alert.triggeredAt });
      },
      { id: 'crm', superseded: 'skip' },
    );
    receiver.onError(async (error, alert) => {
      const name = error instanceof Error ? error.name : 'unknown';
      await post(`${env.RECORDER_URL}/error/${alert.userId}`, { name });
    });
  },
});
