/**
 * `pnpm demo:lambda`: queue mode on SQS and DynamoDB emulators (fauxqs, dynalite), no AWS account.
 * This example's handler (src/queue-handler.ts) runs as a producer function behind a function URL
 * and as a consumer function invoked by the queue's event source mapping, each in a process of its
 * own. Alerts are POSTed to the function URL; partway, the consumer is killed with SIGKILL in the
 * middle of a batch and a new one is started; SQS delivers the killed batch again once its
 * visibility timeout ends. The demo checks that every alert answered 202 was handled once. Exits 0
 * when it was; every process it started is stopped on the way out.
 */
import { createTestDelivery } from '@churn-risk/core/testing';
import { createSqsQueue } from '@churn-risk/lambda';
import { fileURLToPath } from 'node:url';
import { startAwsEmulators } from '../../../test/support/aws/emulators.js';
import { spawnTs, type NodeProcess } from '../../../test/support/node-process.js';

const ALERTS = Number(process.env.DEMO_ALERTS ?? 40);
const VISIBILITY_TIMEOUT_S = 3;
const SECRET = 'whsec_demo_lambda';
const FUNCTION = fileURLToPath(new URL('demo/function-process.ts', import.meta.url));

const say = (line: string): void => {
  console.log(line);
};

async function until(what: string, check: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Gave up waiting (${ms / 1000} s) for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The ids a process printed after `word`. */
const idsOf = (child: NodeProcess, word: string): string[] =>
  child.lines
    .filter((line) => line.startsWith(`${word} `))
    .map((line) => line.slice(word.length + 1));

const aws = await startAwsEmulators();
const processes: NodeProcess[] = [];
let ok = false;
try {
  say(
    `1. Emulators: fauxqs (SQS) on ${aws.sqsEndpoint}, dynalite (DynamoDB) on ${aws.dynamoDbEndpoint}`,
  );
  const { queueUrl, queueArn } = await aws.createQueue('churn-risk-alerts', VISIBILITY_TIMEOUT_S);
  const { dedupeTable, failedTable } = await aws.createTables('churn-risk');
  say(
    `2. Queue churn-risk-alerts (visibility timeout ${VISIBILITY_TIMEOUT_S} s), tables ${dedupeTable} and ${failedTable}`,
  );
  const env = {
    ...aws.env,
    CHURN_RISK_WEBHOOK_SECRET: SECRET,
    CHURN_RISK_QUEUE_URL: queueUrl,
    CHURN_RISK_QUEUE_ARN: queueArn,
    CHURN_RISK_DEDUPE_TABLE: dedupeTable,
    CHURN_RISK_FAILED_TABLE: failedTable,
  };
  const start = async (role: string, ready: RegExp): Promise<NodeProcess> => {
    const child = spawnTs(FUNCTION, { ...env, ROLE: role });
    processes.push(child);
    await child.waitForLines(ready);
    return child;
  };
  const producer = await start('producer', /^function URL /);
  const url = (producer.lines.find((line) => line.startsWith('function URL ')) ?? '').slice(13);
  const first = await start('consumer', /^event source mapping polling$/);
  say(
    `3. Producer function behind a function URL on ${url} (pid ${producer.pid}); consumer function (pid ${first.pid}) invoked by the event source mapping`,
  );

  const accepted: string[] = [];
  let killed = false;
  let working: string[] = [];
  let second: NodeProcess | undefined;
  for (let i = 0; i < ALERTS; i++) {
    const userId = `demo_user_${String(i + 1).padStart(3, '0')}`;
    const { headers, body } = createTestDelivery({ userId }, { secret: SECRET });
    const answer = await fetch(url, { method: 'POST', headers, body });
    if (answer.status === 202) accepted.push(userId);
    else say(`   ${userId}: answered ${answer.status}, not sent`);
    // Partway, once the consumer is in the middle of a batch (working on alerts, none of the
    // batch done yet): kill it.
    if (!killed && i >= ALERTS / 2) {
      await until(
        'a batch in the consumer',
        () => idsOf(first, 'working').length > idsOf(first, 'handled').length,
      );
      const done = new Set(idsOf(first, 'handled'));
      working = idsOf(first, 'working').filter((id) => !done.has(id));
      first.kill('SIGKILL');
      await first.exited;
      killed = true;
      say(
        `4. ${i + 1} alerts answered 202 so far; killed the consumer (SIGKILL) in the middle of a batch: ${working.length} alert(s) being worked on, not done`,
      );
      second = await start('consumer', /^event source mapping polling$/);
      say(
        `5. Started a new consumer (pid ${second.pid}); SQS delivers the killed batch again once its visibility timeout (${VISIBILITY_TIMEOUT_S} s) ends`,
      );
    }
  }
  say(
    `6. Sent ${ALERTS} alerts: ${accepted.length} answered 202 (the identity claimed in DynamoDB, the alert in SQS)`,
  );
  const consumers = [first, second].filter((c): c is NodeProcess => c !== undefined);
  const handled = (): string[] => consumers.flatMap((c) => idsOf(c, 'handled'));
  await until('every alert handled', () => {
    const ids = new Set(handled().map((id) => id.split(':')[0]));
    return accepted.every((userId) => ids.has(userId));
  });
  const counts = new Map<string, number>();
  for (const id of handled()) counts.set(id, (counts.get(id) ?? 0) + 1);
  const twice = [...counts].filter(([, n]) => n > 1);
  const again = working.filter((id) =>
    (second === undefined ? [] : idsOf(second, 'handled')).includes(id),
  );
  const queue = createSqsQueue({
    queueUrl,
    dedupeTable,
    failedTable,
    sqs: aws.sqs,
    dynamodb: aws.dynamodb,
  });
  const failed = await queue.failed();
  say(
    `7. The killed batch, delivered again: ${again.length} of ${working.length} alert(s) handled by the new consumer`,
  );
  ok = counts.size === accepted.length && twice.length === 0 && failed.length === 0;
  say(
    ok
      ? `8. Every alert handled once: ${counts.size} of ${accepted.length}, none twice, none failed.`
      : `8. NOT every alert handled once: ${counts.size} handled of ${accepted.length}, ${twice.length} twice, ${failed.length} failed.`,
  );
} catch (error) {
  say(`The demo failed: ${error instanceof Error ? error.message : String(error)}`);
} finally {
  for (const child of processes) child.kill('SIGKILL');
  await Promise.all(processes.map((child) => child.exited));
  await aws.stop();
}
process.exitCode = ok ? 0 : 1;
