import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { ChurnRiskClient, type ChurnRiskAlert, type RiskScore } from '@churn-risk/core';
import { createTestDelivery } from '@churn-risk/core/testing';
import { createSandbox, type DeliveryRecord, type Sandbox } from '@churn-risk/sandbox';
import { createReport, waitFor, type Report } from '@churn-risk/example-durable-demo';
import { createApp } from '../../express/src/app.js';

const THRESHOLD = 0.7;

function describeScore(risk: RiskScore): string {
  const signals = risk.signals.length > 0 ? risk.signals.join(', ') : 'no signals';
  return `${risk.userId}: ${risk.score.toFixed(2)} (${risk.tier}) [${signals}]`;
}

function describeAttempts(record: DeliveryRecord): string {
  return record.attempts
    .map((attempt) => ('status' in attempt ? `HTTP ${String(attempt.status)}` : 'no answer'))
    .join(', ');
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => {
      resolve();
    });
  });
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve(`http://127.0.0.1:${port}`);
    });
  });
}

/**
 * The end-to-end demo: a local churn-risk service (the sandbox), the Express example app as the
 * receiver, and the API client driving one user's risk over a watch's threshold. Resolves with
 * the number of failed checks (0 on success).
 */
export async function runDemo(write?: (line: string) => void): Promise<number> {
  const report = createReport(write);
  let sandbox: Sandbox | undefined;
  let server: Server | undefined;
  try {
    report.step('Start the local churn-risk service (sandbox)');
    sandbox = await createSandbox();
    report.ok(`listening on ${sandbox.url}`);
    report.info(
      `API key ${sandbox.apiKey.slice(0, 12)}…, webhook secret ${sandbox.webhookSecret.slice(0, 10)}…`,
    );

    report.step('Start the receiver: the Express example app, signing secret from the sandbox');
    const { app, receiver, alerts } = createApp({ secret: sandbox.webhookSecret });
    const received: { alert: ChurnRiskAlert; attempt: number }[] = [];
    receiver.on('churn_risk_alert', (alert, context) => {
      received.push({ alert, attempt: context.attempt });
    });
    server = createServer(app);
    const receiverUrl = await listen(server);
    const webhook = `${receiverUrl}/webhooks/churn-risk`;
    report.ok(`webhook at ${webhook}`);

    const client = new ChurnRiskClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
    await runSteps({ report, sandbox, client, webhook, received, alerts });
  } catch (error) {
    report.fail(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  } finally {
    if (server) await closeServer(server);
    await sandbox?.close();
  }
  const verdict =
    report.failures === 0 ? 'demo passed' : `demo FAILED (${report.failures} failed checks)`;
  (write ?? console.log)(`\n${verdict}`);
  return report.failures;
}

interface StepsInput {
  report: Report;
  sandbox: Sandbox;
  client: ChurnRiskClient;
  webhook: string;
  received: { alert: ChurnRiskAlert; attempt: number }[];
  alerts: ChurnRiskAlert[];
}

async function runSteps({
  report,
  sandbox,
  client,
  webhook,
  received,
  alerts,
}: StepsInput): Promise<void> {
  report.step('Identify three users and send their recent events');
  await client.identify('alice', { plan: 'pro', mrr: 99, email: 'alice@example.com' });
  await client.identify('bob', { plan: 'enterprise', mrr: 2400, company: 'Bobcorp' });
  await client.identify('carol', { plan: 'free' });
  const { accepted } = await client.trackBulk([
    { userId: 'bob', event: 'login' },
    { userId: 'bob', event: 'report_exported', properties: { format: 'csv' } },
    { userId: 'carol', event: 'login' },
    { userId: 'carol', event: 'support_ticket_opened', properties: { topic: 'billing' } },
  ]);
  report.ok(`traits stored for 3 users; ${accepted} events accepted`);
  for (const userId of ['alice', 'bob', 'carol'])
    report.info(describeScore(await client.getRiskScore(userId)));

  report.step(`Watch alice: alert when her score reaches ${THRESHOLD} (cooldown 24h)`);
  const watched = await client.watch('alice', { threshold: THRESHOLD, webhook, cooldown: '24h' });
  report.ok(`watching ${watched.userId} at ${watched.threshold} → ${watched.webhook}`);

  report.step('Two failed payments drive alice over the threshold');
  await client.track({ userId: 'alice', event: 'payment_failed', properties: { amount: 99 } });
  await client.track({ userId: 'alice', event: 'payment_failed', properties: { amount: 99 } });
  const risk = await client.getRiskScore('alice');
  report.info(describeScore(risk));
  if (risk.score >= THRESHOLD) report.ok(`score ${risk.score} crossed ${THRESHOLD}`);
  else report.fail(`score ${risk.score} did not reach ${THRESHOLD}`);

  report.step('The signed churn_risk_alert arrives, is verified, acknowledged and handled');
  const first = await waitFor(() => received[0], { what: 'the alert to reach the handler' });
  report.ok(
    `handler got ${first.alert.userId}: score ${first.alert.score}, tier ${first.alert.tier}`,
  );
  report.info(`signals: ${first.alert.signals.join(', ')}`);
  report.info(`recommendation: ${first.alert.recommendation}`);
  await waitFor(() => (alerts.length > 0 ? alerts : undefined), {
    what: 'the example app to record it',
  });
  const record = await waitFor(
    () => sandbox.deliveries.list().find((entry) => entry.state === 'delivered'),
    { what: 'the delivery log to show it delivered' },
  );
  report.ok(`delivery ${record.id}: ${describeAttempts(record)} (${record.state})`);

  report.step('A forged delivery (signed with another secret) is refused');
  const forged = createTestDelivery(first.alert, { secret: 'whsec_not_the_real_secret' });
  const answer = await fetch(webhook, {
    method: 'POST',
    headers: forged.headers,
    body: forged.body,
  });
  const refusal = (await answer.json()) as { error?: { code?: string } };
  if (
    answer.status === 401 &&
    refusal.error?.code === 'INVALID_SIGNATURE' &&
    received.length === 1
  ) {
    report.ok(`HTTP ${answer.status} ${refusal.error.code}; the handler did not run again`);
  } else {
    report.fail(`expected 401 INVALID_SIGNATURE, got ${answer.status} ${JSON.stringify(refusal)}`);
  }

  report.step('Cooldown: alice dips below and crosses again; the watch holds the second alert');
  await client.track({ userId: 'alice', event: 'login' });
  report.info(`after a login: ${describeScore(await client.getRiskScore('alice'))}`);
  await client.track({ userId: 'alice', event: 'plan_downgraded' });
  await client.track({ userId: 'alice', event: 'plan_downgraded' });
  const again = await client.getRiskScore('alice');
  report.info(`after two downgrades: ${describeScore(again)}`);
  await sandbox.deliveries.idle();
  const deliveries = sandbox.deliveries.list();
  if (again.score >= THRESHOLD && deliveries.length === 1 && received.length === 1) {
    report.ok('crossed again, but no second delivery: the 24h cooldown holds it');
  } else {
    report.fail(
      `expected one delivery and one alert, got ${deliveries.length} and ${received.length}`,
    );
  }

  report.step('Find everyone at risk');
  const page = await client.getAtRiskUsers({ threshold: 0.4 });
  report.ok(
    `${page.total} user(s) at or above 0.4: ${page.users.map((u) => `${u.userId} ${u.score}`).join(', ')}`,
  );
}
