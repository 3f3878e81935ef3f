import { describe, expect, it } from 'vitest';
import { AlertStalledError, createReceiver, type Receiver } from '@churn-risk/core';
import {
  createPushQueue,
  type AlertRecord,
  PushOrder,
  type PushQueue,
  type PushVerdict,
  type UserOrderKey,
} from '@churn-risk/core/store';
import {
  createTestDelivery,
  pushQueueContract,
  type ContractTestApi,
  type ReceiverPlatform,
} from '@churn-risk/core/testing';
import { alertOf } from '../../testing/order-cases.js';
import {
  delivery as signed,
  quietLogger,
  SECRET as CONTRACT_SECRET,
} from '../../testing/support.js';

// Core's push entry point: a platform queue delivers messages, core runs each try and hands
// back the verdict; the platform here is an in-memory stand-in with Cloudflare Queues' shape (a
// retry is a new message carrying the record, sent with a delay; a failure goes to a failed store).

const SECRET = 'whsec_push_queue';

interface Platform {
  messages: AlertRecord<'delivered'>[];
  failed: { message: AlertRecord<'delivered'>; verdict: PushVerdict }[];
  identities: Set<string>;
}

function platform(): Platform {
  return { messages: [], failed: [], identities: new Set() };
}

/** A receiver on a push queue over `p`, with its consumer: runs messages until none is left. */
function setUp(
  p: Platform,
  options: { retries?: number; apply?: (verdict: PushVerdict) => boolean } = {},
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
 * Order per user in memory, as a platform's shared table keeps it: each user's line of alerts
 * (time, order of acceptance, done) and the alert that holds the user. `broken` leaves out a
 * part, for the contract to catch: `'no-hold'` never holds (every claim goes through),
 * `'any-first'` holds but lets any waiting alert of a free user start (not the oldest first).
 */
/** A platform order of two functions. */
function orderOf(claim: PushOrder['claim'], release: PushOrder['release']): PushOrder {
  return new (class extends PushOrder {
    claim = claim;
    release = release;
  })();
}

export class MemoryOrder extends PushOrder {
  readonly #lines = new Map<string, { id: string; at: number; seq: number; done: boolean }[]>();
  readonly #holders = new Map<string, string>();
  readonly #newest = new Map<string, number>();
  readonly #broken: 'no-hold' | 'any-first' | undefined;
  #seq = 0;
  /** Every claim's and release's alert, in order: `claim <id>`, `wait <id>`, `release <id>`. */
  readonly calls: string[] = [];

  constructor(broken?: 'no-hold' | 'any-first') {
    super();
    this.#broken = broken;
  }

  /** What `send` with `order` records: the alert in its user's line, and the user's newest. */
  record(id: string, key: UserOrderKey): void {
    const line = this.#lines.get(key.user) ?? [];
    const row = line.find((r) => r.id === id);
    if (row === undefined) line.push({ id, at: key.at, seq: ++this.#seq, done: false });
    else row.done = false; // a failed alert sent back waits again
    this.#lines.set(key.user, line);
    this.#newest.set(key.user, Math.max(this.#newest.get(key.user) ?? key.at, key.at));
  }

  claim(
    message: AlertRecord<'delivered'>,
    key: UserOrderKey,
  ): Promise<{ newest: number } | { waitMs: number }> {
    const line = this.#lines.get(key.user) ?? [];
    const own = line.find((r) => r.id === message.id);
    const holder = this.#holders.get(key.user);
    const held = holder !== undefined && holder !== message.id;
    const older = line.some(
      (r) =>
        !r.done &&
        r.id !== message.id &&
        (r.at < key.at || (r.at === key.at && own !== undefined && r.seq < own.seq)),
    );
    const waits =
      this.#broken === 'no-hold' ? false : this.#broken === 'any-first' ? held : held || older;
    if (waits) {
      this.calls.push(`wait ${message.id}`);
      return Promise.resolve({ waitMs: 5 });
    }
    this.calls.push(`claim ${message.id}`);
    this.#holders.set(key.user, message.id);
    return Promise.resolve({ newest: this.#newest.get(key.user) ?? key.at });
  }

  release(message: AlertRecord<'delivered'>, key: UserOrderKey): Promise<void> {
    this.calls.push(`release ${message.id}`);
    const row = this.#lines.get(key.user)?.find((r) => r.id === message.id);
    if (row !== undefined) row.done = true;
    if (this.#holders.get(key.user) === message.id) this.#holders.delete(key.user);
    return Promise.resolve();
  }
}

/**
 * An in-memory platform queue with Cloudflare Queues' shape: a retry is a new message that
 * carries the record, sent with a delay (`delaySeconds`, not before it is due); a failed alert is
 * kept in a failed store that lists and retries; in order per user, a postponed message goes
 * back for its delay. The messages that are due are delivered side by side (a batch), each to the
 * next isolate's queue in turn, so that the tries of one alert run in different isolates.
 */
class MemoryPlatform implements ReceiverPlatform {
  readonly #messages: { message: AlertRecord<'delivered'>; dueAt: number }[] = [];
  readonly #failed: AlertRecord<'failed'>[] = [];
  readonly #identities = new Set<string>();
  readonly #queues: PushQueue[] = [];
  readonly #order: MemoryOrder;
  #turn = 0;

  constructor(order: MemoryOrder = new MemoryOrder()) {
    this.#order = order;
  }

  queue(): PushQueue {
    const queue = createPushQueue({
      kind: 'memory-platform',
      send: (entry, options) => {
        if (this.#identities.has(entry.id)) return Promise.resolve('duplicate');
        this.#identities.add(entry.id);
        if (options?.order !== undefined) this.#order.record(entry.id, options.order);
        this.#messages.push({ message: { ...entry, tries: 0, succeeded: [] }, dueAt: Date.now() });
        return Promise.resolve('accepted');
      },
      order: this.#order,
    });
    this.#queues.push(queue);
    return queue;
  }

  async settle(): Promise<void> {
    while (this.#messages.length > 0) {
      const first = Math.min(...this.#messages.map((m) => m.dueAt));
      const wait = first - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const now = Date.now();
      const due = this.#messages.filter((m) => m.dueAt <= now);
      for (const next of due) this.#messages.splice(this.#messages.indexOf(next), 1);
      await Promise.all(due.map(({ message }) => this.#deliver(message)));
    }
  }

  #deliver(message: AlertRecord<'delivered'>): Promise<void> {
    const queue = this.#queues[this.#turn++ % this.#queues.length] as PushQueue;
    return queue.runDelivered(message, (verdict) => {
      if (verdict.outcome === 'postponed') {
        this.#messages.push({ message, dueAt: Date.now() + verdict.delayMs });
      } else if (verdict.outcome === 'retry') {
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

  failed(): Promise<AlertRecord<'failed'>[]> {
    return Promise.resolve([...this.#failed].reverse()); // newest first, as every store lists
  }

  retry(id: string): Promise<void> {
    const index = this.#failed.findIndex((failed) => failed.jobId === id || failed.id === id);
    const [failed] = this.#failed.splice(index, 1);
    if (index < 0 || failed === undefined) return Promise.reject(new TypeError('unknown id'));
    const { id: alertId, alert, succeeded } = failed;
    this.#order.record(alertId, { user: alert.userId, at: Date.parse(alert.triggeredAt) });
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

/** The contract's cases against a platform whose order is `broken`, by name. */
function brokenCases(broken: 'no-hold' | 'any-first'): Map<string, () => Promise<void>> {
  const cases = new Map<string, () => Promise<void>>();
  const capture: ContractTestApi = {
    describe: (_name, fn) => {
      fn();
    },
    it: (name, fn) => void cases.set(name, fn),
  };
  pushQueueContract(capture, {
    name: broken,
    create: () => new MemoryPlatform(new MemoryOrder(broken)),
  });
  return cases;
}

describe('pushQueueContract: order per user', () => {
  it('fails a platform order that lets two alerts of one user run at the same time', async () => {
    const cases = brokenCases('no-hold');
    const overlap = cases.get('order per user: two alerts of one user never run at the same time');
    expect(overlap).toBeDefined();
    await expect(overlap?.()).rejects.toThrow(/runs of one user at the same time/);
  });

  it('fails a platform order that starts a newer alert of a user before an older one', async () => {
    const cases = brokenCases('any-first');
    const oldest = cases.get(
      "order per user: a user's oldest alert starts first, whatever the order of acceptance",
    );
    expect(oldest).toBeDefined();
    await expect(oldest?.()).rejects.toThrow(/the runs of the user's alerts/);
  });

  it('fails a platform order whose retry does not keep its user', async () => {
    const cases = brokenCases('no-hold');
    const retry = cases.get(
      'order per user: a retry keeps its user; a failed alert releases it at once',
    );
    expect(retry).toBeDefined();
    await expect(retry?.()).rejects.toThrow(/the runs \(alert@attempt\)/);
  });
});

describe('createPushQueue in order per user', () => {
  const quiet = { logger: quietLogger };

  it("refuses a receiver with order: 'per-user' when the queue has no order, naming the option", () => {
    const queue = createPushQueue({ kind: 'x', send: () => Promise.resolve('accepted') });
    expect(() => createReceiver({ secret: SECRET, order: 'per-user', queue })).toThrow(
      /needs the x queue.s order/,
    );
    // In order 'none' the order is not needed.
    const other = createPushQueue({ kind: 'x', send: () => Promise.resolve('accepted') });
    expect(() => createReceiver({ secret: SECRET, queue: other })).not.toThrow();
  });

  it('sends the user and time with the alert, and only in order per user', async () => {
    const sent: unknown[] = [];
    for (const order of ['none', 'per-user'] as const) {
      const queue = createPushQueue({
        kind: 'x',
        send: (...args) => {
          sent.push(args[1]);
          return Promise.resolve('accepted');
        },
        order: new MemoryOrder(),
      });
      const receiver = createReceiver({ secret: CONTRACT_SECRET, order, queue });
      const entry = alertOf(`u_send_${order}`, 7);
      expect((await receiver.handle(signed(entry))).status).toBe(202);
    }
    expect(sent).toEqual([
      undefined,
      { order: { user: 'u_send_per-user', at: Date.parse(alertOf('u', 7).alert.triggeredAt) } },
    ]);
  });

  it('postpones a message whose user is held, with no try; releases after completed and failed, not retry', async () => {
    const order = new MemoryOrder();
    const queue = createPushQueue({ kind: 'x', send: () => Promise.resolve('accepted'), order });
    const receiver = createReceiver({
      secret: CONTRACT_SECRET,
      order: 'per-user',
      queue,
      retries: { retries: 1, backoffMs: () => 5 },
      ...quiet,
    });
    const runs: string[] = [];
    receiver.on('churn_risk_alert', (alert, { attempt }) => {
      runs.push(`${alert.triggeredAt}@${String(attempt)}`);
      if (attempt === 0) throw new Error('CRM down');
    });
    const [older, newer] = [alertOf('u_post', 1), alertOf('u_post', 2)];
    order.record(older.id, { user: 'u_post', at: Date.parse(older.alert.triggeredAt) });
    order.record(newer.id, { user: 'u_post', at: Date.parse(newer.alert.triggeredAt) });
    const verdicts: PushVerdict[] = [];
    const deliver = (entry: AlertRecord<'accepted'>, tries: number): Promise<void> =>
      queue.runDelivered({ ...entry, tries, succeeded: [] }, (verdict) => {
        verdicts.push(verdict);
        return Promise.resolve(true);
      });
    await deliver(newer, 0); // an older alert waits: postponed
    await deliver(older, 0); // holds, fails once: a retry, still holding
    await deliver(newer, 0); // the user is held by the retry: postponed
    await deliver(older, 1); // holds again, completes, releases
    await deliver(newer, 0); // holds, fails: a retry
    await deliver(newer, 1); // completes
    expect(verdicts.map((v) => v.outcome)).toEqual([
      'postponed',
      'retry',
      'postponed',
      'completed',
      'retry',
      'completed',
    ]);
    expect(verdicts[0]).toEqual({ outcome: 'postponed', delayMs: 5 });
    expect(runs).toEqual([
      `${older.alert.triggeredAt}@0`,
      `${older.alert.triggeredAt}@1`,
      `${newer.alert.triggeredAt}@0`,
      `${newer.alert.triggeredAt}@1`,
    ]);
    expect(order.calls).toEqual([
      `wait ${newer.id}`,
      `claim ${older.id}`,
      `wait ${newer.id}`,
      `claim ${older.id}`,
      `release ${older.id}`,
      `claim ${newer.id}`,
      `claim ${newer.id}`,
      `release ${newer.id}`,
    ]);
    expect(receiver.stats.failed).toBe(0);
  });

  it('gives the try context.supersededBy from the newest time the platform answers', async () => {
    const answers = [
      Date.parse(alertOf('u', 9).alert.triggeredAt),
      Date.parse(alertOf('u', 3).alert.triggeredAt),
    ];
    const queue = createPushQueue({
      kind: 'x',
      send: () => Promise.resolve('accepted'),
      order: orderOf(
        () => Promise.resolve({ newest: answers.shift() ?? 0 }),
        () => Promise.resolve(),
      ),
    });
    const receiver = createReceiver({ secret: CONTRACT_SECRET, order: 'per-user', queue });
    const seen: (string | undefined)[] = [];
    receiver.on('churn_risk_alert', (_alert, context) => void seen.push(context.supersededBy));
    const entry = alertOf('u_sup', 3);
    for (let i = 0; i < 2; i++) {
      await queue.runDelivered({ ...entry, tries: 0, succeeded: [] }, () => Promise.resolve(true));
    }
    expect(seen).toEqual([alertOf('u', 9).alert.triggeredAt, undefined]);
  });

  it('a release that rejects is logged; the verdict stands and nothing is reported', async () => {
    const logged: string[] = [];
    const queue = createPushQueue({
      kind: 'x',
      send: () => Promise.resolve('accepted'),
      order: orderOf(
        (_message, key) => Promise.resolve({ newest: key.at }),
        () => Promise.reject(new Error('D1 down')),
      ),
    });
    const receiver = createReceiver({
      secret: CONTRACT_SECRET,
      order: 'per-user',
      queue,
      logger: { ...quiet.logger, error: (_fields, message) => void logged.push(message) },
    });
    const errors: unknown[] = [];
    receiver.on('churn_risk_alert', () => undefined);
    receiver.onError((error) => void errors.push(error));
    const outcomes: string[] = [];
    await queue.runDelivered({ ...alertOf('u_rel', 1), tries: 0, succeeded: [] }, (verdict) => {
      outcomes.push(verdict.outcome);
      return Promise.resolve(true);
    });
    expect(outcomes).toEqual(['completed']);
    expect(errors).toEqual([]);
    expect(logged).toEqual([expect.stringMatching(/u_rel.*did not release its user/)]);
  });
});
