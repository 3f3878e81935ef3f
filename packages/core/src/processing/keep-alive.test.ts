import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  AlertCutOffError,
  createReceiver,
  HandlersFailedError,
  type Logger,
  type Receiver,
  type ReceiverOptions,
} from '@churn-risk/core';
import { createTestDelivery } from '@churn-risk/core/testing';
import { cutOffPoint } from './keep-alive.js';

// No silent cut-off: alerts kept alive by a platform `waitUntil` run under the
// platform's budget (`keepAliveBudgetMs`). The clock and timers are vitest's fake ones: the test
// moves time, nothing depends on how fast the machine is.

const SECRET = 'whsec_keep_alive';
let sequence = 0;

interface Setup {
  receiver: Receiver;
  errors: unknown[];
  lines: { fields: Record<string, unknown>; message: string }[];
  kept: Promise<unknown>[];
  deliver(withWaitUntil?: boolean): Promise<number>;
}

function setUp(options: Partial<ReceiverOptions> = {}): Setup {
  const lines: Setup['lines'] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (fields, message) => void lines.push({ fields, message }),
  };
  const receiver = createReceiver({ secret: SECRET, logger, ...options });
  const errors: unknown[] = [];
  receiver.onError((error) => void errors.push(error));
  const kept: Promise<unknown>[] = [];
  return {
    receiver,
    errors,
    lines,
    kept,
    async deliver(withWaitUntil = true) {
      const triggeredAt = new Date(Date.UTC(2026, 0, 1) + ++sequence * 1000).toISOString();
      const { headers, body } = createTestDelivery({ triggeredAt }, { secret: SECRET });
      const request = new Request('https://worker.test/', { method: 'POST', headers, body });
      const response = await receiver.fetch(
        request,
        withWaitUntil ? { waitUntil: (promise) => void kept.push(promise) } : {},
      );
      return response.status;
    },
  };
}

const cutOffLines = (lines: Setup['lines']): Setup['lines'] =>
  lines.filter((line) => line.fields.code === 'CUT_OFF');

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('keepAliveBudgetMs: no silent cut-off', () => {
  it('reports a handler still running at the cut-off point once, before the budget ends', async () => {
    const { receiver, errors, lines, kept, deliver } = setUp({ keepAliveBudgetMs: 10_000 });
    let runs = 0;
    receiver.on('churn_risk_alert', () => void (runs += 1), { id: 'audit' });
    receiver.on('churn_risk_alert', () => new Promise<void>(() => undefined), { id: 'crm' });
    expect(await deliver()).toBe(202);
    expect(cutOffPoint(10_000)).toBe(9_000);
    await vi.advanceTimersByTimeAsync(8_999);
    expect(errors).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    // At 90 % of the budget: onError and the log line are written while the platform still waits.
    expect(errors).toHaveLength(1);
    const [error] = errors as AlertCutOffError[];
    expect(error).toBeInstanceOf(AlertCutOffError);
    expect(error?.code).toBe('CUT_OFF');
    // The running try's handlers are not recorded yet: both count as not done.
    expect(error?.pending).toEqual(['audit', 'crm']);
    expect(cutOffLines(lines)).toHaveLength(1);
    expect(cutOffLines(lines)[0]?.message).toMatch(
      /queue mode.*@churn-risk\/postgres.*@churn-risk\/redis/,
    );
    // The waitUntil promise settles with the report, so the platform is not left waiting.
    await expect(Promise.all(kept)).resolves.toBeDefined();
    await vi.advanceTimersByTimeAsync(120_000);
    expect(errors).toHaveLength(1);
    expect(cutOffLines(lines)).toHaveLength(1);
    expect(runs).toBe(1);
    expect(receiver.stats.failed).toBe(1);
  });

  it('starts no retry whose delay ends past the budget: reported at once, no further try', async () => {
    const { receiver, errors, lines, deliver } = setUp({
      keepAliveBudgetMs: 30_000,
      retries: { retries: 3, backoffMs: (attempt) => 10_000 * (attempt + 1) },
    });
    const attempts: number[] = [];
    receiver.on('churn_risk_alert', () => undefined, { id: 'audit' });
    receiver.on(
      'churn_risk_alert',
      (_alert, { attempt }) => {
        attempts.push(attempt);
        throw new Error('CRM down');
      },
      { id: 'crm' },
    );
    expect(await deliver()).toBe(202);
    // Try 0 fails; the next try after 10 s (at 10 s) fits, try 1 fails; the next after 20 s would
    // end at 30 s, past the cut-off point (27 s): reported now, with the last try's error as the cause.
    await vi.advanceTimersByTimeAsync(10_000);
    expect(attempts).toEqual([0, 1]);
    expect(errors).toHaveLength(1);
    expect((errors[0] as AlertCutOffError).cause).toBeInstanceOf(HandlersFailedError);
    expect((errors[0] as AlertCutOffError).pending).toEqual(['crm']);
    expect(cutOffLines(lines)).toHaveLength(1);
    expect(cutOffLines(lines)[0]?.fields.tries).toBe(2);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(attempts).toEqual([0, 1]);
    expect(errors).toHaveLength(1);
  });

  it('changes nothing for an alert done within the budget', async () => {
    const { receiver, errors, lines, deliver } = setUp({
      keepAliveBudgetMs: 30_000,
      retries: { retries: 2, backoffMs: () => 1_000 },
    });
    const attempts: number[] = [];
    receiver.on('churn_risk_alert', (_alert, { attempt }) => {
      attempts.push(attempt);
      if (attempt < 2) throw new Error('not yet');
    });
    await deliver();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(attempts).toEqual([0, 1, 2]);
    expect(errors).toEqual([]);
    expect(cutOffLines(lines)).toEqual([]);
  });

  it('a failure after the last try within the budget is reported as usual, once', async () => {
    const { receiver, errors, deliver } = setUp({
      keepAliveBudgetMs: 30_000,
      retries: { retries: 1, backoffMs: () => 1_000 },
    });
    receiver.on('churn_risk_alert', () => {
      throw new Error('always');
    });
    await deliver();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(errors).toHaveLength(1);
    expect(errors[0]).not.toBeInstanceOf(AlertCutOffError);
  });

  it('has no budget without a waitUntil, nor by default outside workerd', async () => {
    for (const [options, withWaitUntil] of [
      [{ keepAliveBudgetMs: 1_000 }, false],
      [{}, true],
    ] as const) {
      const { receiver, errors, deliver } = setUp(options);
      let done = false;
      receiver.on('churn_risk_alert', async () => {
        await new Promise((resolve) => setTimeout(resolve, 50_000));
        done = true;
      });
      await deliver(withWaitUntil);
      await vi.advanceTimersByTimeAsync(60_000);
      expect(done).toBe(true);
      expect(errors).toEqual([]);
    }
  });

  it('refuses a keepAliveBudgetMs that is not a positive whole number', () => {
    for (const keepAliveBudgetMs of [0, -1, 1.5, Number.NaN]) {
      expect(() => createReceiver({ secret: SECRET, keepAliveBudgetMs })).toThrow(TypeError);
    }
  });
});
