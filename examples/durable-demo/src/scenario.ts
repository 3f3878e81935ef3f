import { ChurnRiskClient } from '@churn-risk/core';
import { createSandbox, type Sandbox } from '@churn-risk/sandbox';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DemoBackend } from './backend.js';
import { crossThreshold, watchUsers } from './drive-alerts.js';
import { startWeb, startWorker, storeFile, WORKER_SETTINGS, type ProcessEnv } from './processes.js';
import { redeliverElsewhere } from './redeliver.js';
import type { Report } from './report.js';
import type { Resources } from './resources.js';
import { checkOpsPage } from './ops-page.js';
import { countRuns } from './tally.js';
import { waitFor } from './wait-for.js';
import { waitUntilHandled, type Summary } from './summary.js';

/** Watched users; half of them cross the threshold before the crash, half while no worker runs. */
const USERS = 200;
/** Handled alerts before the worker is killed. */
const KILL_AFTER = 30;

/** Runs the demo's steps on `backend`; every process and server goes into `resources`. */
export async function runScenario(
  backend: DemoBackend,
  report: Report,
  resources: Resources,
): Promise<Summary> {
  report.step(`Start ${backend.title} and the local churn-risk service (sandbox)`);
  const server = (resources.server = await backend.startServer());
  report.ok(server.description);
  const sandbox = (resources.sandbox = await createSandbox());
  report.ok(`sandbox on ${sandbox.url}`);
  const node = backend.node?.();
  if (node !== undefined) {
    report.info(
      `web and worker processes run on ${node === process.execPath ? 'this Node' : node}`,
    );
  }
  const dir = (resources.dir = mkdtempSync(join(tmpdir(), `churn-risk-${backend.id}-demo-`)));
  const env: ProcessEnv = {
    run: { cwd: backend.exampleRoot, node },
    common: { [backend.urlVariable]: server.url, CHURN_RISK_WEBHOOK_SECRET: sandbox.webhookSecret },
    workerEnv: backend.workerEnv ?? {},
    dir,
    track: (child) => resources.track(child),
  };

  report.step('Start two web processes (consume: false) and one worker process');
  const [web1, web2] = await Promise.all([startWeb('web 1', env), startWeb('web 2', env)]);
  report.ok(`web 1 at ${web1.webhook}`);
  report.ok(`web 2 at ${web2.webhook}`);
  if (web1.ops !== undefined) report.info(`failed alerts page: ${web1.ops}`);
  const worker1 = await startWorker('worker', env);
  const { concurrency, workMs, lockMs } = WORKER_SETTINGS;
  report.ok(`worker (pid ${worker1.pid}): ${concurrency} at once, up to ${workMs} ms each`);

  report.step(`Watch ${USERS} users: half point at web 1, half at web 2`);
  const client = new ChurnRiskClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
  const users = await watchUsers(client, USERS, [web1.webhook, web2.webhook]);
  report.ok(`${users.length} watches at threshold 0.5`);

  report.step(`${USERS / 2} users cross the threshold; kill the worker (SIGKILL) mid-alert`);
  // The alerts keep arriving while the worker handles them; it dies in the middle of both.
  const wave1 = crossThreshold(client, sandbox, users.slice(0, USERS / 2));
  wave1.catch(() => undefined); // awaited below; no unhandled rejection meanwhile
  const atKill = await waitFor(
    () => {
      const runs = countRuns(worker1.lines);
      return runs.alerts - runs.inFlight >= KILL_AFTER && runs.inFlight > 0 ? runs : undefined;
    },
    { timeoutMs: 20_000, what: `the worker to handle ${KILL_AFTER} alerts` },
  );
  await worker1.stop('SIGKILL');
  report.ok(`killed the worker with ${atKill.inFlight} alert(s) in its handler`);
  report.info(`${atKill.alerts - atKill.inFlight} handled before the crash`);
  await wave1;

  report.step(`The other ${USERS / 2} cross while no worker runs: the web processes accept them`);
  await crossThreshold(client, sandbox, users.slice(USERS / 2));
  await waitForDeliveries(sandbox, USERS);
  report.ok(`all ${USERS} deliveries answered 202 (${backend.accepted})`);
  if (server.describeQueue) report.info(await server.describeQueue());

  report.step('A redelivery that lands on the other web process is a duplicate');
  const redelivered = await redeliverElsewhere(
    sandbox.deliveries.list(),
    sandbox.webhookSecret,
    20,
  );
  if (redelivered.duplicates === redelivered.sent) {
    report.ok(`${redelivered.sent} redeliveries: all answered 202 {"duplicate":true}`);
  } else {
    report.fail(`${redelivered.sent} redeliveries, only ${redelivered.duplicates} duplicates`);
  }

  report.step(`Start the worker again: ${backend.takeover(lockMs)}`);
  const worker2 = await startWorker('worker (restarted)', env);
  report.ok(`worker (pid ${worker2.pid}) ready`);
  const outcome = await waitUntilHandled(sandbox, storeFile(env));
  report.ok(`every delivered alert is in the worker's store after ${outcome.seconds} s`);

  if (web1.ops !== undefined) await checkOpsPage(web1.ops, report);

  report.step('Stop everything with SIGTERM: the worker drains, the web processes close');
  for (const child of [worker2, web1.child, web2.child]) {
    const how = await child.stop('SIGTERM');
    if (how === 0) report.ok(`${child.name} exited 0`);
    else report.fail(`${child.name} ended with ${String(how)}`);
  }
  const runs = countRuns([...worker1.lines, ...worker2.lines]);
  return { tally: outcome.tally, runs, redelivered };
}

async function waitForDeliveries(sandbox: Sandbox, expected: number): Promise<void> {
  const delivered = (): number =>
    sandbox.deliveries.list().filter((record) => record.state === 'delivered').length;
  try {
    await waitFor(() => (delivered() >= expected ? true : undefined), {
      timeoutMs: 20_000,
      what: `all ${expected} deliveries to be answered 202`,
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`${message} Only ${delivered()} were.`, { cause: error });
  }
}
