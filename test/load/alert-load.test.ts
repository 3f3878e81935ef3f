/**
 * Load: 5,000 distinct alerts through every adapter on a real socket, 32 keep-alive connections,
 * handlers that sleep and fail by seeded chance, a small queue so that some deliveries get 503.
 * Every alert must end up accepted exactly once and then handled exactly once or reported to
 * `onError` after its retries; 503s only while the queue is full; nothing left behind.
 */
import { describe, expect, it } from 'vitest';
import { runAlertLoad, type LoadPlan, type LoadReport } from './alert-load.js';
import { ADAPTERS } from './mount-adapters.js';

const PLAN: LoadPlan = {
  alerts: 5000,
  seed: 20_260_115,
  workers: 32,
  concurrency: 16,
  maxQueue: 32,
  retries: 2,
  permanentRate: 0.04,
  transientRate: 0.12,
  duplicateRate: 0.02,
  maxSleepMs: 5,
};

/** Heap growth allowed after the drain and a forced GC (measured: about -2 MB to 0; the dedupe store keeps 5,000 keys). */
const HEAP_SLACK_BYTES = 10 * 1024 * 1024;

function expectAccountedFor(report: LoadReport, plan: LoadPlan): void {
  // Only the three expected answers came back.
  expect(report.unexpected).toEqual([]);

  // Every alert was accepted exactly once: 503'd ones were resent until accepted, none twice.
  expect(report.accepted.filter((count) => count !== 1)).toEqual([]);

  // Some deliveries were refused, each one a well-formed 503 OVERLOADED with Retry-After, and
  // each happened with the queue full: maxQueue waiting and every processing slot busy.
  const refusals = report.refused.reduce((sum, count) => sum + count, 0);
  expect(refusals).toBeGreaterThan(0);
  expect(report.wellFormedRefusals).toBe(refusals);
  expect(report.queueAtRefusal).toHaveLength(refusals);
  const notFull = report.queueAtRefusal.filter(
    (at) => at.queued !== plan.maxQueue || at.running !== plan.concurrency,
  );
  expect(notFull).toEqual([]);

  // Duplicates were answered as duplicates and not run again.
  expect(report.duplicatesSent).toBeGreaterThan(0);
  expect(report.duplicateAnswers).toBe(report.duplicatesSent);

  // Each alert's handler ran as its fate says: once, after its planned transient failures, or
  // through all retries and then onError exactly once with the last failure.
  expect(report.attemptMismatches).toBe(0);
  const wrong: string[] = [];
  report.fates.forEach((fate, index) => {
    const tries = report.tries[index];
    const handled = report.handled[index];
    const errors = report.errors[index] ?? [];
    if (fate.kind === 'permanent') {
      const last = errors[0];
      if (
        tries !== plan.retries + 1 ||
        handled !== 0 ||
        errors.length !== 1 ||
        last?.attempt !== plan.retries ||
        last.message !== `planned failure of alert ${index}, try ${plan.retries}`
      ) {
        wrong.push(
          `${index} permanent: ${tries} tries, ${handled} handled, ${errors.length} errors`,
        );
      }
    } else {
      const expectedTries = fate.kind === 'ok' ? 1 : fate.failures + 1;
      if (tries !== expectedTries || handled !== 1 || errors.length !== 0) {
        wrong.push(
          `${index} ${fate.kind}: ${tries} tries, ${handled} handled, ${errors.length} errors`,
        );
      }
    }
  });
  expect(wrong).toEqual([]);

  // The receiver's own counters agree, and nothing is left queued or running.
  const permanent = report.fates.filter((fate) => fate.kind === 'permanent').length;
  expect(permanent).toBeGreaterThan(0);
  expect(report.fates.some((fate) => fate.kind === 'transient')).toBe(true);
  expect(report.stats).toEqual({
    queued: 0,
    running: 0,
    accepted: plan.alerts,
    duplicates: report.duplicatesSent,
    failed: permanent,
    superseded: 0,
  });
  // The dedupe store holds one identity per accepted alert: refused claims were given back.
  expect(report.dedupeSize).toBe(plan.alerts);
  // Memory came back near where it started (coarse: a leak of every request would show).
  expect(report.heapAfter - report.heapBefore).toBeLessThan(HEAP_SLACK_BYTES);
}

describe('load: 5,000 alerts through each adapter at 32 connections', () => {
  for (const [name, serve] of Object.entries(ADAPTERS)) {
    it(
      `${name}: every alert accepted once, handled once or reported, 503 only when full`,
      { timeout: 90_000 },
      async () => {
        const report = await runAlertLoad(serve, PLAN);
        expectAccountedFor(report, PLAN);
      },
    );
  }
});
