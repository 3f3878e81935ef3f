import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ChurnRiskClient,
  createReceiver,
  defaultShouldRetry,
  isChurnRiskError,
  NonRetryableError,
  ServiceError,
  type Logger,
  type Receiver,
  type RetryOptions,
} from '@churn-risk/core';
import {
  createDurableQueue,
  createMemoryStore,
  createPushQueue,
  type AlertRecord,
  type DurableQueue,
  type AlertVerdict,
} from '@churn-risk/core/store';
import { createTestDelivery } from '@churn-risk/core/testing';
import { API_KEY, startFakeService, type FakeService } from '../client/fake-service.test-util.js';

// Errors that must not be retried: a NonRetryableError, or an error whose `retryable`
// is false, ends the alert's tries at once (the one try protocol), in memory mode, under
// createDurableQueue and through the push entry point alike; `retries.shouldRetry` decides for
// other errors, with the failed try's attempt number.

const SECRET = 'whsec_non_retryable_7f1c';
let sequence = 0;

function request(): { method: string; headers: Record<string, string>; body: string } {
  sequence += 1;
  const { headers, body } = createTestDelivery(
    { userId: `user_nr_${String(sequence)}` },
    { secret: SECRET },
  );
  return { method: 'POST', headers, body };
}

/** What a mode lets a test see after an alert's tries are over. */
interface Mode {
  receiver: Receiver;
  /** Delivers one alert and resolves once its tries are over (its verdicts applied). */
  deliver(): Promise<void>;
  /** Retries the mode's store scheduled (or the platform was asked to deliver again). */
  scheduledRetries(): number;
  /** Alerts in the failed set; `undefined` in memory mode (it has none). */
  failed(): Promise<number | undefined>;
  /** A failed alert's record of succeeded handlers; `undefined` in memory mode. */
  failedRecord(): Promise<readonly string[] | undefined>;
  /** Puts the failed alert back (durable modes) and resolves once its tries are over again. */
  retryFailed?(): Promise<void>;
}

type ModeOptions = { retries: RetryOptions; logger?: Logger };

/** The default in-memory queue. */
function memoryMode(options: ModeOptions): Mode {
  const receiver = createReceiver({ secret: SECRET, ...options });
  return {
    receiver,
    async deliver() {
      expect((await receiver.handle(request())).status).toBe(202);
      await receiver.drain({ timeoutMs: 10_000 });
    },
    scheduledRetries: () => 0, // a retry here is a timer: the handler's run count shows it
    failed: () => Promise.resolve(undefined),
    failedRecord: () => Promise.resolve(undefined),
  };
}

/** The reference store under createDurableQueue; `scheduleRetry` writes are counted. */
function durableMode(options: ModeOptions): Mode {
  const store = createMemoryStore();
  let retries = 0;
  const counted = new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== 'function') return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(target);
      if (key !== 'scheduleRetry') return bound;
      return (...args: unknown[]) => {
        retries += 1;
        return bound(...args);
      };
    },
  });
  const queue: DurableQueue = createDurableQueue(counted, { pollIntervalMs: 10 });
  const receiver = createReceiver({ secret: SECRET, queue, ...options });
  return {
    receiver,
    async deliver() {
      expect((await receiver.handle(request())).status).toBe(202);
      await receiver.drain({ timeoutMs: 10_000 });
    },
    scheduledRetries: () => retries,
    failed: async () => (await queue.counts()).failed,
    failedRecord: async () => (await queue.failed())[0]?.succeeded,
    async retryFailed() {
      const [failed] = await queue.failed();
      if (failed === undefined) throw new Error('no failed alert');
      await queue.retry(failed.id);
      await receiver.drain({ timeoutMs: 10_000 });
    },
  };
}

/** The push entry point, over an in-memory stand-in for a platform queue (Cloudflare Queues). */
function pushMode(options: ModeOptions): Mode {
  const messages: AlertRecord<'delivered'>[] = [];
  const failedStore: { message: AlertRecord<'delivered'>; verdict: AlertVerdict }[] = [];
  let retries = 0;
  const queue = createPushQueue({
    kind: 'test-platform',
    send: (entry) => {
      messages.push({ ...entry, tries: 0, succeeded: [] });
      return Promise.resolve('accepted');
    },
  });
  const receiver = createReceiver({ secret: SECRET, queue, ...options });
  const consume = async (): Promise<void> => {
    for (let message = messages.shift(); message !== undefined; message = messages.shift()) {
      const current = message;
      await queue.runDelivered(current, (verdict) => {
        if (verdict.outcome === 'retry') {
          retries += 1;
          messages.push({ ...current, tries: verdict.tries, succeeded: verdict.succeeded });
        } else if (verdict.outcome === 'failed') {
          failedStore.push({ message: current, verdict });
        }
        return Promise.resolve(true);
      });
    }
  };
  return {
    receiver,
    async deliver() {
      expect((await receiver.handle(request())).status).toBe(202);
      await consume();
    },
    scheduledRetries: () => retries,
    failed: () => Promise.resolve(failedStore.length),
    failedRecord: () => {
      const verdict = failedStore[0]?.verdict;
      return Promise.resolve(verdict?.outcome === 'failed' ? [...verdict.succeeded] : undefined);
    },
    async retryFailed() {
      const failed = failedStore.shift();
      if (failed === undefined || failed.verdict.outcome === 'completed') {
        throw new Error('no failed alert');
      }
      // An operator's retry from the failed store: tries reset, the record kept.
      messages.push({ ...failed.message, tries: 0, succeeded: failed.verdict.succeeded });
      await consume();
    },
  };
}

const MODES = { memory: memoryMode, durable: durableMode, push: pushMode } as const;
const FAST: RetryOptions = { retries: 3, backoffMs: () => 5 };

const open: Receiver[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((receiver) => receiver.close({ timeoutMs: 10_000 })));
});

function setUp(name: keyof typeof MODES, options: ModeOptions): Mode {
  const mode = MODES[name](options);
  open.push(mode.receiver);
  return mode;
}

describe('NonRetryableError', () => {
  it('has a code, retryable false, a cause, and a type guard that works across copies', () => {
    const cause = new Error('404 from the CRM');
    const error = new NonRetryableError('No CRM account', { cause });
    expect(error).toMatchObject({
      name: 'NonRetryableError',
      code: 'NON_RETRYABLE',
      retryable: false,
      message: 'No CRM account',
    });
    expect(error.cause).toBe(cause);
    expect(error).toBeInstanceOf(Error);
    expect(isChurnRiskError(error, 'NonRetryableError')).toBe(true);
    const copy = Object.assign(new Error('x'), {
      name: 'NonRetryableError',
      code: 'NON_RETRYABLE',
    });
    expect(isChurnRiskError(copy, 'NonRetryableError')).toBe(true);
    expect(isChurnRiskError(new Error('x'), 'NonRetryableError')).toBe(false);
    expect(
      isChurnRiskError({ name: 'NonRetryableError', code: 'NON_RETRYABLE' }, 'NonRetryableError'),
    ).toBe(false);
  });

  it('the default shouldRetry: false for it and for retryable: false, true otherwise', () => {
    expect(defaultShouldRetry(new NonRetryableError('x'))).toBe(false);
    expect(defaultShouldRetry(new ServiceError({ code: 'NOT_FOUND', message: 'x' }))).toBe(false);
    const transient = new ServiceError({ code: 'SERVER_ERROR', message: 'x', retryable: true });
    expect(defaultShouldRetry(transient)).toBe(true);
    expect(defaultShouldRetry(new Error('x'))).toBe(true);
    expect(defaultShouldRetry('a string')).toBe(true);
    expect(defaultShouldRetry(null)).toBe(true);
  });

  it('refuses a shouldRetry that is not a function', () => {
    const retries = { shouldRetry: true } as unknown as RetryOptions;
    expect(() => createReceiver({ secret: SECRET, retries })).toThrow(
      /retries.shouldRetry must be a function/,
    );
  });
});

for (const name of Object.keys(MODES) as (keyof typeof MODES)[]) {
  describe(`${name} mode`, () => {
    it('a handler that throws NonRetryableError runs once; the alert fails and onError runs once with it', async () => {
      const mode = setUp(name, { retries: FAST });
      let runs = 0;
      const thrown = new NonRetryableError('No CRM account for this user');
      const reported: unknown[] = [];
      mode.receiver.on('churn_risk_alert', () => {
        runs += 1;
        throw thrown;
      });
      mode.receiver.onError((error) => void reported.push(error));
      await mode.deliver();
      expect(runs).toBe(1);
      expect(reported).toEqual([thrown]);
      expect(reported[0]).toBe(thrown);
      expect(mode.scheduledRetries()).toBe(0);
      if (name !== 'memory') expect(await mode.failed()).toBe(1);
      expect(mode.receiver.stats.failed).toBe(1);
    });

    it('a rejection with it counts the same as a throw', async () => {
      const mode = setUp(name, { retries: FAST });
      let runs = 0;
      const reported: unknown[] = [];
      mode.receiver.on('churn_risk_alert', async () => {
        runs += 1;
        await Promise.resolve();
        throw new NonRetryableError('gone', { cause: new Error('410') });
      });
      mode.receiver.onError((error) => void reported.push(error));
      await mode.deliver();
      expect(runs).toBe(1);
      expect(reported).toHaveLength(1);
      expect(isChurnRiskError(reported[0], 'NonRetryableError')).toBe(true);
      expect(mode.scheduledRetries()).toBe(0);
    });

    it("shouldRetry gets the error and the failed try's attempt, and its false ends the tries", async () => {
      const asked: [unknown, number][] = [];
      const attempts: number[] = [];
      const mode = setUp(name, {
        retries: {
          ...FAST,
          shouldRetry: (error, attempt) => {
            asked.push([error, attempt]);
            return attempt < 1;
          },
        },
      });
      const errors = [new Error('first'), new Error('second')];
      const reported: unknown[] = [];
      mode.receiver.on('churn_risk_alert', (_alert, context) => {
        attempts.push(context.attempt);
        throw errors[context.attempt] ?? new Error('more');
      });
      mode.receiver.onError((error) => void reported.push(error));
      await mode.deliver();
      expect(attempts).toEqual([0, 1]);
      expect(asked).toEqual([
        [errors[0], 0],
        [errors[1], 1],
      ]);
      expect(reported).toEqual([errors[1]]);
      expect(mode.scheduledRetries()).toBe(name === 'memory' ? 0 : 1);
      if (name !== 'memory') expect(await mode.failed()).toBe(1);
    });

    it('shouldRetry answering true keeps every retry, is not asked after the last try, and may retry a retryable: false error', async () => {
      const asked: number[] = [];
      const mode = setUp(name, {
        retries: {
          retries: 2,
          backoffMs: () => 5,
          shouldRetry: (_error, attempt) => {
            asked.push(attempt);
            return true;
          },
        },
      });
      let runs = 0;
      const reported: unknown[] = [];
      mode.receiver.on('churn_risk_alert', () => {
        runs += 1;
        throw new ServiceError({ code: 'NOT_FOUND', message: 'no such user', status: 404 });
      });
      mode.receiver.onError((error) => void reported.push(error));
      await mode.deliver();
      expect(runs).toBe(3);
      expect(asked).toEqual([0, 1]);
      expect(reported).toHaveLength(1);
      expect(mode.scheduledRetries()).toBe(name === 'memory' ? 0 : 2);
    });

    it('a NonRetryableError is not retried even when shouldRetry answers true', async () => {
      const mode = setUp(name, { retries: { ...FAST, shouldRetry: () => true } });
      let runs = 0;
      mode.receiver.on('churn_risk_alert', () => {
        runs += 1;
        throw new NonRetryableError('never');
      });
      const reported: unknown[] = [];
      mode.receiver.onError((error) => void reported.push(error));
      await mode.deliver();
      expect(runs).toBe(1);
      expect(reported).toHaveLength(1);
      expect(mode.scheduledRetries()).toBe(0);
    });

    it('a shouldRetry that throws is logged, and the default decides', async () => {
      const lines: string[] = [];
      const at = (_fields: Record<string, unknown>, message: string): void =>
        void lines.push(message);
      const logger: Logger = { debug: at, info: at, warn: at, error: at };
      const mode = setUp(name, {
        retries: {
          ...FAST,
          shouldRetry: () => {
            throw new TypeError('bug in shouldRetry');
          },
        },
        logger,
      });
      let runs = 0;
      mode.receiver.on('churn_risk_alert', () => {
        runs += 1;
        throw new ServiceError({ code: 'NOT_FOUND', message: 'no such user' });
      });
      mode.receiver.onError(() => undefined);
      await mode.deliver();
      expect(runs).toBe(1); // the default: retryable false is not retried
      expect(
        lines.some((line) => /retries\.shouldRetry threw .*bug in shouldRetry/.test(line)),
      ).toBe(true);
    });

    it("one handler's non-retryable error fails the alert at that try; each failure is reported once, the record keeps the one that succeeded", async () => {
      const mode = setUp(name, { retries: FAST });
      const runs = { audit: 0, crm: 0, mail: 0 };
      const crmError = new NonRetryableError('No CRM account');
      const mailError = new Error('mail server down');
      const reported: unknown[] = [];
      mode.receiver.on('churn_risk_alert', () => void (runs.audit += 1), { id: 'audit' });
      mode.receiver.on(
        'churn_risk_alert',
        () => {
          runs.crm += 1;
          throw crmError;
        },
        { id: 'crm' },
      );
      mode.receiver.on(
        'churn_risk_alert',
        () => {
          runs.mail += 1;
          throw mailError;
        },
        { id: 'mail' },
      );
      mode.receiver.onError((error) => void reported.push(error));
      await mode.deliver();
      expect(runs).toEqual({ audit: 1, crm: 1, mail: 1 });
      expect(reported).toEqual([crmError, mailError]);
      expect(mode.scheduledRetries()).toBe(0);
      if (mode.retryFailed !== undefined) {
        expect(await mode.failed()).toBe(1);
        expect(await mode.failedRecord()).toEqual(['audit']);
        // A retry from the failed set runs the two that failed again, never the one that succeeded.
        await mode.retryFailed();
        expect(runs).toEqual({ audit: 1, crm: 2, mail: 2 });
      }
    });
  });
}

describe("the client's typed errors in a handler (a real HTTP service)", () => {
  let service: FakeService;
  beforeAll(async () => {
    service = await startFakeService();
  });
  afterAll(() => service.close());

  for (const name of Object.keys(MODES) as (keyof typeof MODES)[]) {
    it(`${name}: getRiskScore of an unknown user (404 NOT_FOUND, retryable false) is not retried`, async () => {
      const client = new ChurnRiskClient({ apiKey: API_KEY, baseUrl: service.url });
      const mode = setUp(name, { retries: FAST });
      const reported: unknown[] = [];
      let runs = 0;
      const before = service.requests.length;
      service.reply({
        status: 404,
        body: { error: { code: 'NOT_FOUND', message: 'No user with this id.' } },
      });
      mode.receiver.on('churn_risk_alert', async (alert) => {
        runs += 1;
        await client.getRiskScore(alert.userId);
      });
      mode.receiver.onError((error) => void reported.push(error));
      await mode.deliver();
      expect(runs).toBe(1);
      expect(service.requests.length - before).toBe(1);
      expect(reported).toHaveLength(1);
      expect(reported[0]).toBeInstanceOf(ServiceError);
      expect(reported[0]).toMatchObject({ code: 'NOT_FOUND', retryable: false, status: 404 });
      expect(mode.scheduledRetries()).toBe(0);
      if (name !== 'memory') expect(await mode.failed()).toBe(1);
    });

    it(`${name}: a 503 the client gave up on (retryable true) is retried by the receiver`, async () => {
      const client = new ChurnRiskClient({ apiKey: API_KEY, baseUrl: service.url, maxRetries: 0 });
      const mode = setUp(name, { retries: { retries: 1, backoffMs: () => 5 } });
      const reported: unknown[] = [];
      let runs = 0;
      service.reply(
        { status: 503, body: { error: { code: 'SERVER_ERROR', message: 'busy' } } },
        { status: 503, body: { error: { code: 'SERVER_ERROR', message: 'busy' } } },
      );
      mode.receiver.on('churn_risk_alert', async (alert) => {
        runs += 1;
        await client.getRiskScore(alert.userId);
      });
      mode.receiver.onError((error) => void reported.push(error));
      await mode.deliver();
      expect(runs).toBe(2);
      expect(reported).toHaveLength(1);
      expect(reported[0]).toMatchObject({ code: 'SERVER_ERROR', retryable: true });
    });
  }
});

describe('sync mode', () => {
  it('ends the tries at once and answers 500 HANDLER_FAILED, so the service redelivers', async () => {
    const receiver = createReceiver({ secret: SECRET, mode: 'sync', retries: FAST });
    open.push(receiver);
    let runs = 0;
    const reported: unknown[] = [];
    receiver.on('churn_risk_alert', () => {
      runs += 1;
      throw new NonRetryableError('No CRM account');
    });
    receiver.onError((error) => void reported.push(error));
    const answer = await receiver.handle(request());
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'HANDLER_FAILED' } });
    expect(runs).toBe(1);
    expect(reported).toHaveLength(1);
  });
});
