import { post, type RecorderEnv } from './fixture-recorder.test-util.js';
import { createWorker } from './index.js';

/**
 * The worker that create-worker.workerd.test.ts bundles and runs in workerd. Its handler reports
 * to the test's recorder: `/started`, then waits for `GET /gate` (held by the recorder until the
 * test has the answer) when the user id starts with `gated_`, or 300 ms when it starts with
 * `slow_`, then `/done`.
 */
export default createWorker<RecorderEnv>({
  secret: (env) => env.CHURN_RISK_WEBHOOK_SECRET,
  maxBodyBytes: 4096,
  setup: (receiver, env) => {
    receiver.on('churn_risk_alert', async (alert, context) => {
      await post(`${env.RECORDER_URL}/started`, { userId: alert.userId, id: context.id });
      if (alert.userId.startsWith('gated_')) await (await fetch(`${env.RECORDER_URL}/gate`)).text();
      if (alert.userId.startsWith('slow_'))
        await new Promise((resolve) => setTimeout(resolve, 300));
      await post(`${env.RECORDER_URL}/done`, { userId: alert.userId, id: context.id });
    });
  },
});
