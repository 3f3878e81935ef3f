import { post, type RecorderEnv } from './fixture-recorder.test-util.js';
import { createWorker } from './index.js';

/**
 * The in-memory worker (`createWorker`) in order per user that order.workerd.test.ts runs in
 * workerd: its handler reports each run's start and end to the recorder (`/start/<userId>`,
 * `/end/<userId>`); the alert triggered at minute 0 waits for the recorder's gate (`GET /gate`).
 */
export default createWorker<RecorderEnv>({
  secret: (env) => env.CHURN_RISK_WEBHOOK_SECRET,
  order: 'per-user',
  setup: (receiver, env) => {
    receiver.on('churn_risk_alert', async (alert) => {
      const at = alert.triggeredAt;
      await post(`${env.RECORDER_URL}/start/${alert.userId}`, { at });
      if (new Date(at).getUTCMinutes() === 0) {
        await (await fetch(`${env.RECORDER_URL}/gate`)).text();
      }
      await post(`${env.RECORDER_URL}/end/${alert.userId}`, { at });
    });
    receiver.onError(async (error, alert) => {
      await post(`${env.RECORDER_URL}/error/${alert.userId}`, { error: String(error) });
    });
  },
});
