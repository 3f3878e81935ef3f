import {
  createReceiver,
  type AlertContext,
  type ChurnRiskAlert,
  type Receiver,
} from '@churn-risk/core';
import { describe, expect, it } from 'vitest';
import { createRedisQueue, type RedisQueue } from '../src/index.js';
import { deliveryOf, makeAlert, SECRET, useRedisServer } from './helpers.js';

// No deploy that adds, removes, reorders or changes handlers between two tries of an
// alert can skip a handler that has not yet succeeded for it. Each case runs the first try with
// one release, stops it, and runs the retry with the next release, on a real Redis.

const redis = useRedisServer();
const { open } = redis;
let prefixSeq = 0;

type Handler = (alert: ChurnRiskAlert, context: AlertContext) => unknown;
type Release = [id: string, handler: Handler][];

/** One factory's handlers share their source text: what 0.1's source hashes could not tell apart. */
const notify =
  (name: string, ran: string[], fails = false): Handler =>
  () => {
    ran.push(name);
    if (fails) throw new Error(`${name} failed`);
  };

function worker(prefix: string, release: Release): { receiver: Receiver; queue: RedisQueue } {
  const queue = createRedisQueue({ connection: redis.url, prefix, leaseMs: 2000 });
  const receiver = createReceiver({
    secret: SECRET,
    queue,
    retries: { retries: 2, backoffMs: () => 600_000 }, // the retry waits until promoted
  });
  for (const [id, handler] of release) receiver.on('churn_risk_alert', handler, { id });
  open.queues.push(queue);
  open.receivers.push(receiver);
  return { receiver, queue };
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Runs the first try with `before`, the retry with `after`; resolves with the retry's state. */
async function deploy(before: Release, after: Release): Promise<{ completed: number }> {
  const prefix = `deploy${process.pid}-${++prefixSeq}`;
  const first = worker(prefix, before);
  expect((await first.receiver.handle(deliveryOf(makeAlert()))).status).toBe(202);
  await until(async () => (await first.queue.counts()).delayed === 1, 'the retry to be scheduled');
  await first.receiver.close({ timeoutMs: 10_000 });

  const second = worker(prefix, after);
  const [job] = await second.queue.bullQueue.getDelayed();
  await job?.promote();
  await until(async () => {
    const counts = await second.queue.counts();
    return counts.delayed + counts.waiting + counts.active === 0 || counts.delayed === 1;
  }, 'the retry to run');
  await until(async () => (await second.queue.counts()).active === 0, 'the retry to finish');
  return { completed: (await second.queue.counts()).completed };
}

describe('a deploy between two tries of an alert (real Redis)', () => {
  it('a factory\'s handlers reordered (notify("a"), notify("b") -> b, a): b runs, a does not', async () => {
    const ran: string[] = [];
    await deploy(
      [
        ['notify-a', notify('a', ran)],
        ['notify-b', notify('b', ran, true)],
      ],
      [
        ['notify-b', notify('b fixed', ran)],
        ['notify-a', notify('a', ran)],
      ],
    ).then((state) => {
      expect(state.completed).toBe(1);
    });
    expect(ran).toEqual(['a', 'b', 'b fixed']);
  });

  it('a handler added in front runs; the one that succeeded is skipped; the failed one runs', async () => {
    const ran: string[] = [];
    const state = await deploy(
      [
        ['audit', notify('audit', ran)],
        ['crm', notify('crm', ran, true)],
      ],
      [
        ['slack', notify('slack', ran)],
        ['audit', notify('audit', ran)],
        ['crm', notify('crm fixed', ran)],
      ],
    );
    expect(state.completed).toBe(1);
    expect(ran.slice(2).sort()).toEqual(['crm fixed', 'slack']);
  });

  it('a handler removed is not needed any more; the others keep their record', async () => {
    const ran: string[] = [];
    const state = await deploy(
      [
        ['gone', notify('gone', ran)],
        ['audit', notify('audit', ran)],
        ['crm', notify('crm', ran, true)],
      ],
      [
        ['audit', notify('audit', ran)],
        ['crm', notify('crm fixed', ran)],
      ],
    );
    expect(state.completed).toBe(1);
    expect(ran.slice(3)).toEqual(['crm fixed']);
  });

  it('a changed handler under a new id runs; under its old id it counts as done', async () => {
    const ran: string[] = [];
    const state = await deploy(
      [
        ['audit', notify('audit v1', ran)],
        ['score', notify('score v1', ran)],
        ['crm', notify('crm', ran, true)],
      ],
      [
        ['audit', notify('audit v2', ran)],
        ['score-v2', notify('score v2', ran)],
        ['crm', notify('crm fixed', ran)],
      ],
    );
    expect(state.completed).toBe(1);
    expect(ran.slice(3).sort()).toEqual(['crm fixed', 'score v2']);
  });

  it('a handler that still fails after the deploy is retried again, not skipped', async () => {
    const ran: string[] = [];
    const prefixBefore = prefixSeq;
    await deploy(
      [
        ['a', notify('a', ran)],
        ['b', notify('b', ran, true)],
      ],
      [
        ['b', notify('b again', ran, true)],
        ['a', notify('a', ran)],
      ],
    );
    expect(ran).toEqual(['a', 'b', 'b again']);
    const queue = createRedisQueue({
      connection: redis.url,
      prefix: `deploy${process.pid}-${prefixBefore + 1}`,
    });
    open.queues.push(queue);
    expect(await queue.counts()).toMatchObject({ delayed: 1, completed: 0 });
  });
});
