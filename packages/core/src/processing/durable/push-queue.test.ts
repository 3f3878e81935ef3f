import { describe, expect, it } from 'vitest';
import { AlertStalledError, createReceiver, type Receiver } from '@churn-risk/core';
import {
  createPushQueue,
  type AlertRecord,
  type PushQueue,
  type AlertVerdict,
} from '@churn-risk/core/store';
import {
  createTestDelivery,
  pushQueueContract,
  type ReceiverPlatform,
} from '@churn-risk/core/testing';

// Core's push entry point: a platform queue delivers messages, core runs each try and hands
// back the verdict; the platform here is an in-memory stand-in with Cloudflare Queues' shape (a
// retry is a new message carrying the record, sent with a delay; a failure goes to a failed store).

const SECRET = 'whsec_push_queue';

interface Platform {
  messages: AlertRecord<'delivered'>[];
  failed: { message: AlertRecord<'delivered'>; verdict: AlertVerdict }[];
  identities: Set<string>;
}

function platform(): Platform {
  return { messages: [], failed: [], identities: new Set() };
}

/** A receiver on a push queue over `p`, with its consumer: runs messages until none is left. */
function setUp(
  p: Platform,
  options: { retries?: number; apply?: (verdict: AlertVerdict) => boolean } = {},
): { receiver: Receiver; consume: () => Promise<number> } {
  const queue = createPushQueue({
    kind: 'test-platform',
    send: (entry: AlertRecord<'accepted'>) => {
      if (p.identities.has(entry.id)) return Promise.resolve('duplicate');
      p.identities.add(entry.id);
      p.messages.push({ ...entry, tries: 0, succeeded: [] });
      return Promise.resolve('accepted');
    },
  });
  const receiver = createReceiver({
    secret: SECRET,
    queue,
    retries: { retries: options.retries ?? 3, backoffMs: () => 5 },
  });
  const consume = async (): Promise<number> => {
    let delivered = 0;
    for (let message = p.messages.shift(); message !== undefined; message = p.messages.shift()) {
      delivered++;
      const current = message;
      await queue.runDelivered(current, async (verdict) => {
        if (options.apply !== undefined && !options.apply(verdict)) return false;
        if (verdict.outcome === 'retry') {
          await new Promise((resolve) => setTimeout(resolve, verdict.delayMs));
          p.messages.push({ ...current, tries: verdict.tries, succeeded: verdict.succeeded });
        } else if (verdict.outcome === 'failed') {
          p.failed.push({ message: current, verdict });
        }
        return true;
      });
    }
    return delivered;
  };
  return { receiver, consume };
}

function delivery(userId: string): {
  method: string;
  headers: Record<string, string>;
  body: string;
} {
  const { headers, body } = createTestDelivery({ userId }, { secret: SECRET });
  return { method: 'POST', headers, body };
}

describe('createPushQueue: the push entry point', () => {
  it('answers 202 once the platform holds the alert, and a redelivery to another isolate is a duplicate', async () => {
    const p = platform();
    const first = setUp(p);
    const second = setUp(p);
    const request = delivery('user_push_dup');
    expect((await first.receiver.handle(request)).body).toBe('{"received":true}');
    expect(JSON.parse((await second.receiver.handle(request)).body)).toEqual({
      received: true,
      duplicate: true,
    });
    expect(p.messages).toHaveLength(1);
  });

  it('carries the record across tries: a handler that fails twice runs three times, the other once', async () => {
    const p = platform();
    const { receiver, consume } = setUp(p);
    const runs = { audit: 0, crm: 0 };
    const errors: unknown[] = [];
    receiver.on('churn_risk_alert', () => void (runs.audit += 1), { id: 'audit' });
    receiver.on(
      'churn_risk_alert',
      (_alert, { attempt }) => {
        runs.crm += 1;
        if (attempt < 2) throw new Error('CRM down');
      },
      { id: 'crm' },
    );
    receiver.onError((error) => void errors.push(error));
    await receiver.handle(delivery('user_push_retry'));
    expect(await consume()).toBe(3);
    expect(runs).toEqual({ audit: 1, crm: 3 });
    expect(errors).toEqual([]);
    expect(p.failed).toEqual([]);
  });

  it('after the last try the alert goes to the failed store, and onError runs once after that', async () => {
    const p = platform();
    const { receiver, consume } = setUp(p, { retries: 1 });
    const order: string[] = [];
    receiver.on('churn_risk_alert', () => {
      throw new Error('always');
    });
    receiver.onError(() => void order.push(`onError after ${String(p.failed.length)} stored`));
    await receiver.handle(delivery('user_push_fail'));
    expect(await consume()).toBe(2);
    expect(p.failed).toHaveLength(1);
    expect(p.failed[0]?.verdict).toMatchObject({ outcome: 'failed', tries: 2 });
    expect(order).toEqual(['onError after 1 stored']);
  });

  it('reports nothing when the platform did not take the verdict (it redelivers the message)', async () => {
    const p = platform();
    const { receiver, consume } = setUp(p, { retries: 0, apply: () => false });
    const errors: unknown[] = [];
    receiver.on('churn_risk_alert', () => {
      throw new Error('always');
    });
    receiver.onError((error) => void errors.push(error));
    await receiver.handle(delivery('user_push_refused'));
    await consume();
    expect(errors).toEqual([]);
  });

  it('fails a message redelivered more than maxStalls times without running it', async () => {
    const p = platform();
    const { receiver } = setUp(p);
    await receiver.handle(delivery('user_push_poison'));
    const [message] = p.messages;
    if (message === undefined) throw new Error('no message was sent');
    // A consumer in another isolate, whose platform redelivered the message four times.
    const queue = createPushQueue({ kind: 'x', send: () => Promise.resolve('accepted') });
    const consumer = createReceiver({ secret: SECRET, queue });
    let runs = 0;
    const errors: unknown[] = [];
    consumer.on('churn_risk_alert', () => void (runs += 1));
    consumer.onError((error) => void errors.push(error));
    let outcome: string | undefined;
    await queue.runDelivered({ ...message, stalls: 4 }, (verdict) => {
      outcome = verdict.outcome;
      return Promise.resolve(true);
    });
    expect(outcome).toBe('failed');
    expect(runs).toBe(0);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(AlertStalledError);
    await queue.runDelivered({ ...message, stalls: 3 }, () => Promise.resolve(true));
    expect(runs).toBe(1); // at the limit it still runs
  });

  it('answers 503 OVERLOADED when the platform refuses the alert or does not answer in time', async () => {
    for (const send of [
      () => Promise.reject(new Error('queue unavailable')),
      () => new Promise<'accepted'>(() => undefined),
    ]) {
      const receiver = createReceiver({
        secret: SECRET,
        queue: createPushQueue({ kind: 'x', send, enqueueTimeoutMs: 50 }),
      });
      const answer = await receiver.handle(delivery(`user_push_503_${String(Math.random())}`));
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'OVERLOADED' } });
    }
  });
});

/**
 * An in-memory platform queue with Cloudflare Queues' shape: a retry is a new message that
 * carries the record, sent with a delay (`delaySeconds`, not before it is due); a failed alert is
 * kept in a failed store that lists and retries. Each message goes to the next isolate's queue in
 * turn, so that the tries of one alert run in different isolates.
 */
class MemoryPlatform implements ReceiverPlatform {
  readonly #messages: { message: AlertRecord<'delivered'>; dueAt: number }[] = [];
  readonly #failed: AlertRecord<'failed'>[] = [];
  readonly #identities = new Set<string>();
  readonly #queues: PushQueue[] = [];
  #turn = 0;

  queue(): PushQueue {
    const queue = createPushQueue({
      kind: 'memory-platform',
      send: (entry) => {
        if (this.#identities.has(entry.id)) return Promise.resolve('duplicate');
        this.#identities.add(entry.id);
        this.#messages.push({ message: { ...entry, tries: 0, succeeded: [] }, dueAt: Date.now() });
        return Promise.resolve('accepted');
      },
    });
    this.#queues.push(queue);
    return queue;
  }

  async settle(): Promise<void> {
    while (this.#messages.length > 0) {
      this.#messages.sort((a, b) => a.dueAt - b.dueAt);
      const [next] = this.#messages.splice(0, 1);
      if (next === undefined) break;
      const wait = next.dueAt - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const queue = this.#queues[this.#turn++ % this.#queues.length] as PushQueue;
      const { message } = next;
      await queue.runDelivered(message, (verdict) => {
        if (verdict.outcome === 'retry') {
          this.#messages.push({
            message: { ...message, tries: verdict.tries, succeeded: verdict.succeeded },
            dueAt: Date.now() + verdict.delayMs,
          });
        } else if (verdict.outcome === 'failed') {
          this.#failed.push({
            id: message.id,
            alert: message.alert,
            receivedAt: message.receivedAt,
            jobId: `failed_${String(this.#failed.length)}`,
            tries: verdict.tries,
            succeeded: [...verdict.succeeded],
            error: verdict.error.message,
            failedAt: Date.now(),
          });
        }
        return Promise.resolve(true);
      });
    }
  }

  failed(): Promise<AlertRecord<'failed'>[]> {
    return Promise.resolve([...this.#failed].reverse()); // newest first, as every store lists
  }

  retry(id: string): Promise<void> {
    const index = this.#failed.findIndex((failed) => failed.jobId === id || failed.id === id);
    const [failed] = this.#failed.splice(index, 1);
    if (index < 0 || failed === undefined) return Promise.reject(new TypeError('unknown id'));
    const { id: alertId, alert, succeeded } = failed;
    const message = { id: alertId, alert, receivedAt: Date.now(), tries: 0, succeeded };
    this.#messages.push({ message, dueAt: Date.now() });
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

pushQueueContract(
  { describe, it },
  { name: 'in-memory platform', create: () => new MemoryPlatform() },
);
