/**
 * The queue-mode scenario on SQS and DynamoDB emulators, proof under faults: producer
 * processes (a function URL stand-in invoking the Lambda handler, test/support/aws/producer-process.ts)
 * and consumer processes (the local event source mapping invoking it,
 * test/support/aws/consumer-process.ts) on one fauxqs queue and two dynalite tables, alerts sent
 * over HTTP by senders that resend what was refused, and one consumer SIGKILLed mid-batch and
 * started again.
 */
import { createTestDelivery } from '@churn-risk/core/testing';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAwsEmulators, type AwsEmulators } from '../support/aws/emulators.js';
import { queueDrained } from '../support/aws/event-source-mapping.js';
import { spawnTs, type NodeProcess } from '../support/node-process.js';
import { keepAliveAgent, runPool, send } from './http-pool.js';

const SECRET = 'whsec_sqs_load';
const SUPPORT = new URL('../support/aws/', import.meta.url);
const PRODUCER = fileURLToPath(new URL('producer-process.ts', SUPPORT));
const CONSUMER = fileURLToPath(new URL('consumer-process.ts', SUPPORT));
/** Alerts (user ids `hold_…`) sent just before the kill, whose handler takes HOLD_MS. */
const HOLDS = 8;
/**
 * The queue's visibility timeout: far above the longest batch (a HOLD_MS handler, on a loaded
 * machine), as the SAM template's is 6x the function timeout. A batch still running when it ends
 * would be handed out again and run twice, which is not the fault under test.
 */
const VISIBILITY_TIMEOUT_S = 15;
const CONSUMER_ENV = { WORK_MS: '2', HOLD_MS: '2000', POLLERS: '2', BATCH_SIZE: '10' };

export interface SqsLoadOptions {
  alerts: number;
  producers: number;
  consumers: number;
  /** SIGKILL a consumer that runs one of the `HOLDS` alerts, once this many were answered. */
  killAfter: number;
}

/** What the scenario observed. */
export interface SqsLoadReport {
  /** Alert identities answered `202` (first answers, after resends). */
  accepted: Set<string>;
  /** Answers other than 202 (503s) and connection errors, each resent. */
  refused: number;
  /** Answers `202 duplicate` to a first delivery (there should be none). */
  duplicates: number;
  killedPid: number;
  /** Each alert identity with the pids of its handler's `start` and `done` lines, in log order. */
  runs: Map<string, { start: string[]; done: string[] }>;
  /** Alerts whose last try failed (`error` lines). */
  errors: string[];
  /** What remained in the queue at the end (all zero once drained). */
  remaining: { visible: number; inFlight: number; delayed: number };
  consumerExitCodes: (number | null)[];
  producerExitCodes: (number | null)[];
}

function readRuns(logFile: string): {
  runs: SqsLoadReport['runs'];
  errors: string[];
} {
  const runs: SqsLoadReport['runs'] = new Map();
  const errors: string[] = [];
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    const [kind, id, pid] = line.split(' ');
    if (id === undefined || pid === undefined) continue;
    if (kind === 'error') errors.push(id);
    if (kind !== 'start' && kind !== 'done') continue;
    const entry = runs.get(id) ?? { start: [], done: [] };
    entry[kind].push(pid);
    runs.set(id, entry);
  }
  return { runs, errors };
}

async function until(what: string, check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Runs the scenario; every process and both emulators are stopped before it resolves. */
export async function runSqsLoad(options: SqsLoadOptions): Promise<SqsLoadReport> {
  const dir = mkdtempSync(join(tmpdir(), 'churn-risk-sqs-load-'));
  const logFile = join(dir, 'runs.log');
  writeFileSync(logFile, '');
  const aws: AwsEmulators = await startAwsEmulators();
  const producers: NodeProcess[] = [];
  const consumers: NodeProcess[] = [];
  const agent = keepAliveAgent(32);
  try {
    const { queueUrl, queueArn } = await aws.createQueue('load-alerts', VISIBILITY_TIMEOUT_S);
    const tables = await aws.createTables('load');
    const env = {
      ...aws.env,
      ...tables,
      DEDUPE_TABLE: tables.dedupeTable,
      FAILED_TABLE: tables.failedTable,
      SECRET,
      QUEUE_URL: queueUrl,
      QUEUE_ARN: queueArn,
      LOG_FILE: logFile,
    };
    const startConsumer = async (): Promise<NodeProcess> => {
      const child = spawnTs(CONSUMER, { ...env, ...CONSUMER_ENV });
      consumers.push(child);
      await child.waitForLines(/^consumer ready$/);
      return child;
    };
    // The last producer's SQS refuses every 25th send: those deliveries are answered 503, with
    // their claim released, and the senders resend them.
    for (let i = 0; i < options.producers; i++) {
      const refusing = i === options.producers - 1 ? { REFUSE_SENDS_EVERY: '25' } : {};
      producers.push(spawnTs(PRODUCER, { ...env, ...refusing }));
    }
    await Promise.all(producers.map((p) => p.waitForLines(/^listening on /)));
    const urls = producers.map((p) =>
      (p.lines.find((l) => l.startsWith('listening on ')) ?? '').slice(13),
    );
    for (let i = 0; i < options.consumers; i++) await startConsumer();

    const userIds = Array.from({ length: options.alerts }, (_, i) =>
      i >= options.killAfter - HOLDS && i < options.killAfter ? `hold_${i}` : `load_${i}`,
    );
    const triggeredAt = new Date(Date.UTC(2026, 4, 1)).toISOString();
    const accepted = new Set<string>();
    let refused = 0;
    let duplicates = 0;
    let answered = 0;
    let killedPid = -1;
    let killing: Promise<void> | undefined;
    const kill = async (): Promise<void> => {
      // The consumer running a `hold_` handler: the kill lands mid-batch, however slow the machine.
      const holding = new Set(userIds.slice(options.killAfter - HOLDS, options.killAfter));
      let victim: NodeProcess | undefined;
      await until(
        'a consumer running a hold_ handler',
        () => {
          const { runs } = readRuns(logFile);
          for (const [id, { start, done }] of runs) {
            if (!holding.has(id.split(':')[0] ?? '') || done.length > 0) continue;
            victim = consumers.find((c) => String(c.pid) === start[0]);
            if (victim !== undefined) return true;
          }
          return false;
        },
        120_000,
      );
      if (victim === undefined) return;
      killedPid = victim.pid;
      victim.kill('SIGKILL');
      await victim.exited;
      await startConsumer();
    };
    let next = 0;
    await runPool(
      32,
      () => (next < userIds.length ? next++ : undefined),
      async (index) => {
        const userId = userIds[index] ?? '';
        const { headers, body } = createTestDelivery({ userId, triggeredAt }, { secret: SECRET });
        // A connection error (a keep-alive socket closed under load) is resent like a refusal; if
        // the lost answer was a 202, the resend answers duplicate, which counts as accepted.
        let lost = false;
        for (let attempt = 0; ; attempt++) {
          const url = urls[(index + attempt) % urls.length] ?? '';
          const answer = await send(agent, url, { method: 'POST', headers, body }).catch(
            () => undefined,
          );
          if (answer?.status === 202) {
            if (answer.body.includes('duplicate') && !lost) duplicates++;
            accepted.add(`${userId}:${triggeredAt}`);
            break;
          }
          refused++;
          lost ||= answer === undefined;
          if (attempt > 50)
            throw new Error(`${userId} refused 50 times: ${answer?.status ?? 'reset'}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        answered++;
        if (answered === options.killAfter) killing = kill();
      },
    );
    await killing;
    await until(
      'every accepted alert handled',
      () => {
        const { runs } = readRuns(logFile);
        return [...accepted].every((id) => (runs.get(id)?.done.length ?? 0) > 0);
      },
      240_000,
    );
    await queueDrained(() => aws.messages(queueUrl), 60_000);
    const remaining = await aws.messages(queueUrl);
    const { runs, errors } = readRuns(logFile);
    const stop = async (children: NodeProcess[]): Promise<(number | null)[]> => {
      const alive = children.filter((c) => c.pid !== killedPid);
      for (const child of alive) child.kill('SIGTERM');
      return Promise.all(alive.map((child) => child.exited));
    };
    const consumerExitCodes = await stop(consumers);
    const producerExitCodes = await stop(producers);
    return {
      accepted,
      refused,
      duplicates,
      killedPid,
      runs,
      errors,
      remaining,
      consumerExitCodes,
      producerExitCodes,
    };
  } finally {
    agent.destroy();
    for (const child of [...producers, ...consumers]) child.kill('SIGKILL');
    await Promise.all([...producers, ...consumers].map((child) => child.exited));
    await aws.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
