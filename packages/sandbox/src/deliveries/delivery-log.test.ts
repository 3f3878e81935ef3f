import type { ChurnRiskAlert } from '@churn-risk/core';
import { describe, expect, it } from 'vitest';
import { createManualClock, MANUAL_CLOCK_START } from '../clock/manual-clock.js';
import { createDeliveries } from './delivery-log.js';
import type { DeliveryAttempt, SendAttemptOptions } from './send-attempt.js';

const MIN = 60_000;
const alert: ChurnRiskAlert = {
  event: 'churn_risk_alert',
  userId: 'u1',
  score: 0.75,
  tier: 'high',
  signals: ['payment_failed'],
  recommendation: 'Reach out.',
  triggeredAt: new Date(MANUAL_CLOCK_START).toISOString(),
};
// Nothing listens on port 9 (discard); no test here gets as far as connecting.
const WEBHOOK = 'http://127.0.0.1:9/webhooks/churn-risk';

describe('delivery log: a try that throws', () => {
  it('records a try whose signing fails (empty secret) as a failed attempt and retries it', async () => {
    const clock = createManualClock();
    const deliveries = createDeliveries({ clock, secret: '', timeoutMs: 10_000 });
    const { id } = deliveries.enqueue(alert, WEBHOOK);
    await deliveries.idle();
    const first = deliveries.get(id)!;
    expect(first.state).toBe('pending');
    expect(first.attempts).toEqual([
      {
        at: new Date(MANUAL_CLOCK_START).toISOString(),
        error: expect.stringMatching(/could not sign the delivery: .*secret/) as string,
        durationMs: 0,
      },
    ]);
    expect(first.nextAttemptAt).toBe(new Date(MANUAL_CLOCK_START + MIN).toISOString());
    expect(clock.nextTimerAt()).toBe(MANUAL_CLOCK_START + MIN);

    clock.advance(MIN);
    await deliveries.idle();
    const second = deliveries.get(id)!;
    expect(second.attempts).toHaveLength(2);
    expect(second.attempts[1]!.error).toMatch(/could not sign/);
    expect(second.nextAttemptAt).toBe(new Date(MANUAL_CLOCK_START + 3 * MIN).toISOString());
    await deliveries.close();
  });

  it('records a send that throws or rejects as a failed attempt, and delivers on a later try', async () => {
    const clock = createManualClock();
    const seen: DeliveryAttempt[] = [];
    let calls = 0;
    const send = (options: SendAttemptOptions): Promise<DeliveryAttempt> => {
      calls += 1;
      if (calls === 1) throw new Error('thrown synchronously');
      if (calls === 2) return Promise.reject(new Error('rejected', { cause: new Error('deep') }));
      return Promise.resolve({
        at: new Date(options.clock.now()).toISOString(),
        status: 204,
        durationMs: 0,
      });
    };
    const deliveries = createDeliveries({
      clock,
      secret: 'whsec_x',
      timeoutMs: 10_000,
      send,
      onAttempt: (_record, attempt) => seen.push(attempt),
    });
    const { id } = deliveries.enqueue(alert, WEBHOOK);
    await deliveries.idle();
    expect(deliveries.get(id)).toMatchObject({
      state: 'pending',
      attempts: [{ error: 'thrown synchronously' }],
      nextAttemptAt: new Date(MANUAL_CLOCK_START + MIN).toISOString(),
    });
    clock.advance(MIN);
    await deliveries.idle();
    expect(deliveries.get(id)!.attempts[1]).toEqual({
      at: new Date(MANUAL_CLOCK_START + MIN).toISOString(),
      error: 'rejected: deep',
      durationMs: 0,
    });
    clock.advance(2 * MIN);
    await deliveries.idle();
    const record = deliveries.get(id)!;
    expect(record.state).toBe('delivered');
    expect(record.nextAttemptAt).toBeNull();
    expect(record.attempts.map((a) => a.status ?? a.error)).toEqual([
      'thrown synchronously',
      'rejected: deep',
      204,
    ]);
    expect(seen).toEqual(record.attempts);
    await deliveries.close();
  });
});
