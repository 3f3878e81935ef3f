/**
 * A Postgres anchor of `pnpm bench drain`, written with graphile-worker's documented API
 * (https://worker.graphile.org/docs/library/run, `library/add-job`): `addJob` of
 * `makeWorkerUtils` (after its `migrate`), and `run()` with a hand-written task list, concurrency
 * 10, graphile-worker's defaults otherwise (LISTEN/NOTIFY, a 2 s poll as the fallback, no
 * batching) and a logger that drops the per-job info lines. Runs on Node >= 22.18.
 */
import { loadGraphileWorker, quietLogger, type Runner } from '../lib/graphile-worker-api.js';
import {
  CONCURRENCY,
  identityOf,
  type Consumer,
  type Producer,
  type Side,
  type StampedAlert,
} from './side.js';

const TASK = 'churn_risk_alert';

interface JobData {
  id: string;
  alert: StampedAlert;
  receivedAt: number;
}

export const side: Side = {
  async producer({ url }): Promise<Producer> {
    const worker = await loadGraphileWorker();
    const utils = await worker.makeWorkerUtils({
      connectionString: url,
      logger: quietLogger(worker),
    });
    await utils.migrate();
    return {
      async enqueue(alert) {
        const data: JobData = { id: identityOf(alert), alert, receivedAt: Date.now() };
        await utils.addJob(TASK, data, { maxAttempts: 4 });
      },
      close: () => utils.release(),
    };
  },
  async consumer({ url }, onStart): Promise<Consumer> {
    const worker = await loadGraphileWorker();
    const logger = quietLogger(worker);
    let runner: Runner | undefined;
    return {
      async start() {
        runner = await worker.run({
          connectionString: url,
          concurrency: CONCURRENCY,
          noHandleSignals: true,
          logger,
          taskList: {
            [TASK]: (payload) => {
              onStart((payload as JobData).alert);
            },
          },
        });
      },
      close: async () => {
        await runner?.stop();
      },
    };
  },
};
