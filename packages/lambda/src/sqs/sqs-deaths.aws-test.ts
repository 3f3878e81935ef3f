import { createTestDelivery } from '@churn-risk/core/testing';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startAwsEmulators, type AwsEmulators } from '../../../../test/support/aws/emulators.js';
import { queueDrained } from '../../../../test/support/aws/event-source-mapping.js';
import { spawnTs, type NodeProcess } from '../../../../test/support/node-process.js';
import { createLambdaHandler, createSqsQueue, type SqsQueue } from '../index.js';
import { createReceiver, type Receiver } from '@churn-risk/core';

// Consumers are processes here (test/support/aws/consumer-process.ts), killed with
// SIGKILL: a consumer that dies mid-batch leaves its records to SQS, which delivers them again
// after the visibility timeout; a record that kills every consumer ends as poison after maxStalls.

const SECRET = 'whsec_sqs_deaths';
const CONSUMER = fileURLToPath(
  new URL('../../../../test/support/aws/consumer-process.ts', import.meta.url),
);
let aws: AwsEmulators;
let dir: string;
let cases = 0;
const processes: NodeProcess[] = [];
const receivers: Receiver[] = [];

beforeAll(async () => {
  aws = await startAwsEmulators();
  dir = mkdtempSync(join(tmpdir(), 'churn-risk-sqs-deaths-'));
});

afterEach(async () => {
  for (const child of processes.splice(0)) {
    child.kill('SIGKILL');
    await child.exited;
  }
  await Promise.all(receivers.splice(0).map((r) => r.close({ timeoutMs: 10_000 })));
});

afterAll(async () => {
  await aws.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Case {
  queue: SqsQueue;
  env: Record<string, string>;
  logFile: string;
  /** Sends a signed delivery of an alert for `userId` through a producer in this process. */
  deliver(userId: string): Promise<number>;
  /** The log's lines. */
  lines(): string[];
}

async function setUp(visibilityTimeoutS: number, maxStalls: number): Promise<Case> {
  const name = `deaths-${String(++cases)}`;
  const { queueUrl, queueArn } = await aws.createQueue(name, visibilityTimeoutS);
  const { dedupeTable, failedTable } = await aws.createTables(name);
  const logFile = join(dir, `${name}.log`);
  writeFileSync(logFile, '');
  const queue = createSqsQueue({ queueUrl, dedupeTable, failedTable, ...aws.clients() });
  const producer = createReceiver({ secret: SECRET, queue });
  receivers.push(producer);
  const handler = createLambdaHandler(producer);
  return {
    queue,
    logFile,
    env: {
      ...aws.env,
      SECRET,
      QUEUE_URL: queueUrl,
      QUEUE_ARN: queueArn,
      DEDUPE_TABLE: dedupeTable,
      FAILED_TABLE: failedTable,
      LOG_FILE: logFile,
      MAX_STALLS: String(maxStalls),
    },
    async deliver(userId) {
      const { headers, body } = createTestDelivery({ userId }, { secret: SECRET });
      const answer = await handler({
        version: '2.0',
        headers,
        body,
        isBase64Encoded: false,
        requestContext: { http: { method: 'POST' } },
      });
      return answer.statusCode;
    },
    lines: () => readFileSync(logFile, 'utf8').split('\n').filter(Boolean),
  };
}

async function consumer(env: Record<string, string>): Promise<NodeProcess> {
  const child = spawnTs(CONSUMER, env);
  processes.push(child);
  await child.waitForLines(/^consumer ready$/);
  return child;
}

/** Waits until `check` holds, asking every 50 ms; fails after `ms`. */
async function until(what: string, check: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const ids = (lines: string[], kind: string, pid?: number): string[] =>
  lines
    .map((line) => line.split(' '))
    .filter(([k, , p]) => k === kind && (pid === undefined || p === String(pid)))
    .map(([, id]) => id ?? '');

describe('queue mode when consumers die', () => {
  it('redelivers the records of a consumer SIGKILLed mid-batch to another consumer', async () => {
    const place = await setUp(2, 3);
    for (let i = 0; i < 4; i++) expect(await place.deliver(`hold_sqs_death_${i}`)).toBe(202);
    // One batch of four, each handler holding for a minute: the kill lands mid-batch.
    const first = await consumer({ ...place.env, HOLD_MS: '60000' });
    await until('four handlers started', () => ids(place.lines(), 'start').length === 4);
    first.kill('SIGKILL');
    await first.exited;
    expect(ids(place.lines(), 'done')).toEqual([]);
    const second = await consumer({ ...place.env, HOLD_MS: '0' });
    await until('four handlers done', () => ids(place.lines(), 'done').length === 4);
    const lines = place.lines();
    expect(ids(lines, 'start', first.pid).sort()).toEqual(ids(lines, 'done', second.pid).sort());
    expect(ids(lines, 'error')).toEqual([]);
    await queueDrained(() => aws.messages(place.env.QUEUE_URL ?? ''), 30_000);
    expect(await place.queue.failed()).toEqual([]);
  });

  it('fails a record that kills every consumer as poison after maxStalls, with onError once', async () => {
    const place = await setUp(1, 1);
    expect(await place.deliver('kill_sqs_poison')).toBe(202);
    // maxStalls 1: two consumers die with it (2 receives), the third receive fails it.
    let deaths = 0;
    while (ids(place.lines(), 'error').length === 0) {
      expect(deaths, 'consumers that died').toBeLessThanOrEqual(2);
      const child = await consumer(place.env);
      const outcome = await Promise.race([
        child.exited.then(() => 'died' as const),
        until('the poison verdict', () => ids(place.lines(), 'error').length > 0).then(
          () => 'failed' as const,
        ),
      ]);
      if (outcome === 'died') deaths++;
    }
    expect(deaths).toBe(2);
    const lines = place.lines();
    expect(ids(lines, 'start')).toHaveLength(2);
    expect(lines.filter((line) => line.startsWith('error ')).map((l) => l.split(' ')[3])).toEqual([
      'AlertStalledError',
    ]);
    const [failed] = await place.queue.failed();
    expect(failed?.alert.userId).toBe('kill_sqs_poison');
    expect(failed?.error).toMatch(/^AlertStalledError: Failed as poison \(stalls: 2,/);
    await queueDrained(() => aws.messages(place.env.QUEUE_URL ?? ''), 30_000);
  });
});
