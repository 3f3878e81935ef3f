/**
 * The API client and the event batcher against a flaky network: a proxy in front of a real sandbox
 * injects 500s, 429s, resets and slow or late answers by seeded chance, some after the sandbox has
 * applied the request. Every event must land exactly once (idempotency keys), in order per batcher.
 */
import { ChurnRiskClient, ServiceError } from '@churn-risk/core';
import { createSandbox, type Sandbox } from '@churn-risk/sandbox';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createFlakyProxy,
  type Fault,
  type FlakyProxy,
  type ProxiedRequest,
} from './flaky-proxy.js';
import { drawFor, seededRandom } from './seeded-random.js';

const SEED = 6_2026;
/** Client time-out per attempt; a `late` request is held longer than this. */
const TIMEOUT_MS = 1000;

/** Weights of the faults; a request's fault is a seeded draw from its body and attempt number. */
const WEIGHTS: readonly [Fault, number][] = [
  ['pass', 0.45],
  ['slow', 0.1],
  ['error-500', 0.08],
  ['error-429', 0.08],
  ['reset', 0.08],
  ['applied-then-500', 0.08],
  ['applied-then-reset', 0.08],
  ['late', 0.05],
];

/** Faults for the first `faultyAttempts` attempts of a request, then a clean pass. */
function decider(faultyAttempts: number): (request: ProxiedRequest) => Fault {
  return ({ body, path, attempt }) => {
    if (attempt >= faultyAttempts) return 'pass';
    let draw = drawFor(SEED, path, body, attempt);
    for (const [fault, weight] of WEIGHTS) {
      if (draw < weight) return fault;
      draw -= weight;
    }
    return 'pass';
  };
}

const stopList: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stopList.splice(0).reverse()) await stop();
});

async function flakySetup(
  faultyAttempts: number,
): Promise<{ sandbox: Sandbox; proxy: FlakyProxy; client: ChurnRiskClient }> {
  const sandbox = await createSandbox();
  stopList.push(() => sandbox.close());
  const proxy = await createFlakyProxy({
    target: sandbox.url,
    decide: decider(faultyAttempts),
    slowMs: 50,
    lateMs: TIMEOUT_MS + 300,
  });
  stopList.push(() => proxy.close());
  const random = seededRandom(SEED);
  const client = new ChurnRiskClient(
    { apiKey: sandbox.apiKey, baseUrl: proxy.url, timeout: TIMEOUT_MS, maxRetries: 3 },
    {
      random,
      // The retry schedule itself is unit-tested in core; here only its outcome matters, faster.
      sleep: (ms, signal) => delay(Math.min(ms, 5), undefined, signal ? { signal } : {}),
    },
  );
  return { sandbox, proxy, client };
}

/** `seq` of the stored events of `userId` named `event`, in the order the sandbox stored them. */
function storedSeqs(sandbox: Sandbox, userId: string, event: string): number[] {
  const events = sandbox.service.users.get(userId)?.events ?? [];
  return events
    .filter((item) => item.event === event)
    .map((item) => Number(item.properties?.['seq']));
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

describe('client and batcher through a flaky proxy in front of the sandbox', () => {
  it(
    'track(): 160 calls at 8 at once each land exactly once despite failures after apply',
    { timeout: 60_000 },
    async () => {
      // At most 3 faulty attempts: the 4th (maxRetries 3) passes, so every call succeeds.
      const { sandbox, proxy, client } = await flakySetup(3);
      const calls = 160;
      const users = 8;
      let next = 0;
      const results: number[] = [];
      await Promise.all(
        range(8).map(async () => {
          for (let seq = next++; seq < calls; seq = next++) {
            const { accepted } = await client.track({
              userId: `t_user_${seq % users}`,
              event: 'tracked',
              properties: { seq },
            });
            results.push(accepted);
          }
        }),
      );
      await proxy.idle(); // late requests still held by the proxy reach the sandbox now

      expect(results).toEqual(new Array<number>(calls).fill(1));
      for (const user of range(users)) {
        const seqs = storedSeqs(sandbox, `t_user_${user}`, 'tracked').sort((a, b) => a - b);
        expect(seqs).toEqual(range(calls).filter((seq) => seq % users === user));
      }
      // The dangerous faults really happened, and the sandbox answered retries from its replay store.
      expect(proxy.faults['applied-then-500']).toBeGreaterThan(0);
      expect(proxy.faults['applied-then-reset']).toBeGreaterThan(0);
      expect(proxy.faults.late).toBeGreaterThan(0);
      expect(proxy.replays).toBeGreaterThan(0);
    },
  );

  it(
    '4 batchers: every event exactly once and in order per batcher, flushes retried until sent',
    { timeout: 90_000 },
    async () => {
      // Up to 5 faulty attempts with maxRetries 3: some flushes fail and keep their batch for the next.
      const { sandbox, proxy, client } = await flakySetup(5);
      const perBatcher = 240;
      const usersPerBatcher = 3;
      const batchers = range(4).map((b) => {
        const errors: ServiceError[] = [];
        const batcher = client.createBatcher({
          maxSize: 20,
          flushInterval: 60_000,
          onError: (error) => errors.push(error),
        });
        return { b, batcher, errors, flushFailures: 0 };
      });

      // Pushing synchronously makes the batches (20 events each, in order) the same on every run;
      // every 20th push starts a size-triggered flush, whose failures go to onError.
      for (const { b, batcher } of batchers) {
        for (const seq of range(perBatcher)) {
          batcher.push({
            userId: `b${b}_user_${seq % usersPerBatcher}`,
            event: 'batched',
            properties: { seq },
          });
        }
      }
      await Promise.all(
        batchers.map(async (entry) => {
          for (;;) {
            try {
              await entry.batcher.flush();
              if (entry.batcher.size === 0) break;
            } catch (error) {
              expect(error).toBeInstanceOf(ServiceError);
              expect((error as ServiceError).retryable).toBe(true);
              entry.flushFailures++;
              expect(entry.flushFailures).toBeLessThan(50);
            }
          }
          await entry.batcher.destroy();
        }),
      );
      await proxy.idle();

      for (const { b, errors } of batchers) {
        // Only transient failures were reported; nothing was dropped.
        for (const error of errors) {
          expect(error.retryable).toBe(true);
          expect(error.dropped).toBeUndefined();
        }
        for (const user of range(usersPerBatcher)) {
          // Exactly once and in the order pushed: the stored seqs are this user's seqs, ascending.
          expect(storedSeqs(sandbox, `b${b}_user_${user}`, 'batched')).toEqual(
            range(perBatcher).filter((seq) => seq % usersPerBatcher === user),
          );
        }
      }
      const failuresSeen = batchers.reduce(
        (sum, entry) => sum + entry.flushFailures + entry.errors.length,
        0,
      );
      expect(failuresSeen).toBeGreaterThan(0);
      expect(proxy.faults['applied-then-500'] + proxy.faults['applied-then-reset']).toBeGreaterThan(
        0,
      );
      expect(proxy.replays).toBeGreaterThan(0);
    },
  );
});
