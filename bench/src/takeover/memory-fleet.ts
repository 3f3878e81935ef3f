/**
 * The memory store's fleet (`createMemoryStore`, which core's tests use): every consumer is a
 * `createDurableQueue` of this process on the one store, through a proxy of it. A "kill" makes
 * that proxy's calls never settle: the taker stops renewing its lease, never stores a verdict and
 * takes nothing more, as a process that died or froze; its handler never returns. The other
 * consumers' reclaims then find the lease expired.
 */
import { createReceiver } from '@churn-risk/core';
import { createDurableQueue, createMemoryStore, type AlertStore } from '@churn-risk/core/store';
import { SECRET, alertBody, signHeaders } from '../lib/alert.js';
import { machineClock } from '../lib/clock.js';
import type { Fleet, Member, Start } from './fleet.js';

/** `target` seen through a proxy whose method calls, once `stop()` was called, never settle. */
function stoppable<T extends object>(target: T): { proxy: T; stop(): void } {
  let stopped = false;
  const proxy = new Proxy(target, {
    get(object, key) {
      const value: unknown = Reflect.get(object, key, object);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]): unknown =>
        stopped
          ? new Promise(() => undefined)
          : (value as (...a: unknown[]) => unknown).apply(object, args);
    },
  });
  return {
    proxy,
    stop() {
      stopped = true;
    },
  };
}

export function memoryFleet(leaseMs: number, reclaimIntervalMs: number): Fleet {
  const store = createMemoryStore();
  const starts: Start[] = [];
  const closers: (() => Promise<void>)[] = [];
  let count = 0;
  return {
    starts,
    add(): Promise<Member> {
      const name = `memory consumer ${String(++count)}`;
      const view = stoppable<AlertStore>(store);
      const queue = createDurableQueue(view.proxy, { leaseMs, reclaimIntervalMs });
      const receiver = createReceiver({ secret: SECRET, queue, concurrency: 10 });
      const releases = new Map<string, () => void>();
      let dead = false;
      const member: Member = {
        name,
        async accept() {
          const body = alertBody();
          const result = await receiver.handle({
            method: 'POST',
            headers: { 'content-type': 'application/json', ...signHeaders(body) },
            body,
          });
          if (result.status !== 202) throw new Error(`${name} answered ${String(result.status)}`);
          return (JSON.parse(body) as { userId: string }).userId;
        },
        release(userId) {
          releases.get(userId)?.();
          releases.delete(userId);
        },
        kill() {
          dead = true;
          view.stop();
          return Promise.resolve();
        },
      };
      receiver.on('churn_risk_alert', async (alert) => {
        if (dead) return new Promise<void>(() => undefined);
        starts.push({
          userId: alert.userId,
          at: machineClock(),
          member,
        });
        await new Promise<void>((resolve) => releases.set(alert.userId, resolve));
      });
      closers.push(async () => {
        if (dead) return; // its calls never settle: closing it would wait forever
        for (const release of releases.values()) release();
        await receiver.close();
      });
      return Promise.resolve(member);
    },
    async close() {
      await Promise.all(closers.map((close) => close()));
    },
  };
}
