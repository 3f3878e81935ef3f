import { ChurnRiskClient, verifySignature } from '@churn-risk/core';
import {
  createManualClock,
  createSandbox,
  type ChaosOptions,
  type Sandbox,
} from '@churn-risk/sandbox';
import { afterEach, describe, expect, it } from 'vitest';
import { createSeededRandom } from '../src/chaos/seeded-random.js';
import {
  startReceiver,
  type ReceivedRequest,
  type TestReceiver,
} from './helpers/webhook-receiver.js';

let sandbox: Sandbox | undefined;
let receiver: TestReceiver | undefined;
afterEach(async () => {
  await sandbox?.close();
  await receiver?.close();
  sandbox = receiver = undefined;
});

/** A random source that returns `values` in turn (then 0.999...), so each chaos decision is chosen. */
const scripted =
  (...values: number[]): (() => number) =>
  () =>
    values.shift() ?? 0.999;

/** A receiver that verifies the signature: 202 when it matches, 401 when not. */
function verifying(secret: () => string, clock: () => number) {
  return (_n: number, request: ReceivedRequest): number => {
    try {
      verifySignature({
        body: request.body,
        signature: request.headers['x-service-signature'],
        timestamp: request.headers['x-service-timestamp'],
        secret: secret(),
        now: clock(),
      });
      return 202;
    } catch {
      return 401;
    }
  };
}

async function setUp(chaos: ChaosOptions) {
  const clock = createManualClock();
  const started = await createSandbox({ clock, chaos });
  sandbox = started;
  receiver = await startReceiver(
    verifying(() => started.webhookSecret, clock.now),
    clock.now,
  );
  const client = new ChurnRiskClient({
    apiKey: started.apiKey,
    baseUrl: started.url,
    maxRetries: 0,
  });
  const cross = async (userId: string): Promise<void> => {
    await client.watch(userId, { threshold: 0.7, webhook: receiver!.url, cooldown: '1h' });
    await client.trackBulk(
      ['payment_failed', 'payment_failed', 'plan_downgraded'].map((event) => ({ userId, event })),
    );
  };
  return { clock, sandbox: started, receiver, cross };
}

describe('chaos', () => {
  it('a seeded random source repeats its sequence, in [0, 1)', () => {
    const a = createSeededRandom(7);
    const b = createSeededRandom(7);
    const values = Array.from({ length: 100 }, () => a());
    expect(Array.from({ length: 100 }, () => b())).toEqual(values);
    expect(values.every((v) => v >= 0 && v < 1)).toBe(true);
    expect(new Set(values).size).toBe(100);
    expect(createSeededRandom(8)()).not.toBe(values[0]);
  });

  it.each([
    [{ duplicateRate: 2 }, /chaos.duplicateRate must be a number from 0 to 1/],
    [{ badSignatureRate: -0.1 }, /chaos.badSignatureRate/],
    [{ maxExtraDelayMs: 1.5 }, /chaos.maxExtraDelayMs/],
    [{ seed: 0.5 }, /chaos.seed/],
  ])('createSandbox refuses %j with a TypeError', async (chaos, message) => {
    await expect(createSandbox({ chaos })).rejects.toThrow(message);
  });

  it('duplicateRate: an acknowledged try is sent again, byte-identical, and logged as a duplicate', async () => {
    const { sandbox, receiver, cross } = await setUp({ duplicateRate: 1 });
    await cross('dup');
    await sandbox.deliveries.idle();
    const [first, second] = receiver.received;
    expect(receiver.received).toHaveLength(2);
    expect(second!.body).toBe(first!.body);
    expect(second!.headers['x-service-signature']).toBe(first!.headers['x-service-signature']);
    expect(second!.headers['x-service-timestamp']).toBe(first!.headers['x-service-timestamp']);
    const [record] = sandbox.deliveries.list();
    expect(record!.state).toBe('delivered');
    expect(record!.attempts.map((a) => [a.status, a.duplicate])).toEqual([
      [202, undefined],
      [202, true],
    ]);
  });

  it('badSignatureRate: a wrongly signed try gets 401, counts as failed, and its retry succeeds', async () => {
    const { clock, sandbox, receiver, cross } = await setUp({
      badSignatureRate: 0.5,
      random: scripted(0.1, 0.9), // the first try is signed wrongly, the retry is not
    });
    await cross('bad_sig');
    await sandbox.deliveries.idle();
    expect(sandbox.deliveries.list()[0]).toMatchObject({
      state: 'pending',
      attempts: [{ status: 401, badSignature: true }],
    });
    clock.advance(60_000);
    await sandbox.deliveries.idle();
    const [record] = sandbox.deliveries.list();
    expect(record!.state).toBe('delivered');
    expect(record!.attempts.map((a) => [a.status, a.badSignature])).toEqual([
      [401, true],
      [202, undefined],
    ]);
    expect(receiver.received[1]!.body).toBe(receiver.received[0]!.body);
  });

  it('maxExtraDelayMs: a random real-time delay before each try lets a later alert arrive first', async () => {
    const { sandbox, receiver, cross } = await setUp({
      maxExtraDelayMs: 200,
      random: scripted(0.999, 0), // the first alert waits floor(0.999 * 201) = 200 ms, the second none
    });
    await cross('slow');
    await cross('fast');
    await sandbox.deliveries.idle();
    const users = receiver.received.map((r) => (JSON.parse(r.body) as { userId: string }).userId);
    expect(users).toEqual(['fast', 'slow']);
    const delays = sandbox.deliveries.list().map((d) => [d.alert.userId, d.attempts[0]!.delayedMs]);
    expect(delays).toEqual([
      ['slow', 200],
      ['fast', undefined],
    ]);
  });
});
