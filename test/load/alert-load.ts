/**
 * The alert load scenario: thousands of distinct signed alerts pushed through one adapter by a pool
 * of keep-alive workers, into a receiver with a small queue (so some deliveries get 503) and handlers
 * that sleep and fail by seeded chance. The scenario records everything; the test file asserts.
 */
import { createReceiver, type Receiver, type ReceiverStats } from '@churn-risk/core';
import { signPayload } from '@churn-risk/core/testing';
import { createMemoryDedupeStore } from '@churn-risk/core/store';
import { setTimeout as delay } from 'node:timers/promises';
import { NOW_MS, NOW_S } from '../conformance/fixtures.js';
import { keepAliveAgent, runPool, send } from './http-pool.js';
import type { ServeReceiver } from './mount-adapters.js';
import { drawFor } from './seeded-random.js';

export const LOAD_SECRET = 'whsec_load_7d41c0b2';

/** What a handler does with an alert: succeed, fail `failures` times then succeed, or always fail. */
export type Fate = { kind: 'ok' } | { kind: 'transient'; failures: number } | { kind: 'permanent' };

/** The scenario's knobs. */
export interface LoadPlan {
  alerts: number;
  seed: number;
  /** Client connections (= async workers). */
  workers: number;
  concurrency: number;
  maxQueue: number;
  /** Handler retries (backoff 0). */
  retries: number;
  /** Share of alerts that fail permanently / transiently. */
  permanentRate: number;
  transientRate: number;
  /** Share of accepted alerts sent a second time (duplicates). */
  duplicateRate: number;
  /** Longest handler sleep, ms (each try sleeps 0..max, seeded). */
  maxSleepMs: number;
}

/** An answer that is none of 202 accepted, 202 duplicate or 503 OVERLOADED. */
export interface UnexpectedAnswer {
  index: number;
  status: number;
  body: string;
}

/** Everything the scenario saw. Arrays are indexed by alert index. */
export interface LoadReport {
  fates: Fate[];
  /** 202 `{"received":true}` answers per alert. */
  accepted: number[];
  /** 503 `OVERLOADED` answers per alert (each was resent later). */
  refused: number[];
  /** Duplicates sent, and the answers that were exactly 202 `{"received":true,"duplicate":true}`. */
  duplicatesSent: number;
  duplicateAnswers: number;
  /** 503s with a JSON body of code OVERLOADED and a Retry-After header. */
  wellFormedRefusals: number;
  unexpected: UnexpectedAnswer[];
  /** The receiver's queue at the exact moment of each refusal (seen through the dedupe store). */
  queueAtRefusal: { queued: number; running: number }[];
  /** Handler tries, successful runs and onError reports per alert. */
  tries: number[];
  handled: number[];
  errors: { message: string; attempt: number }[][];
  /** Handler `context.attempt` values that did not count up 0, 1, 2... */
  attemptMismatches: number;
  resendRounds: number;
  stats: ReceiverStats;
  dedupeSize: number;
  heapBefore: number;
  heapAfter: number;
}

/** The fate of alert `index`, by seeded chance. */
export function fateOf(plan: LoadPlan, index: number): Fate {
  const draw = drawFor(plan.seed, 'fate', index);
  if (draw < plan.permanentRate) return { kind: 'permanent' };
  if (draw < plan.permanentRate + plan.transientRate) {
    const failures = 1 + Math.floor(drawFor(plan.seed, 'failures', index) * plan.retries);
    return { kind: 'transient', failures };
  }
  return { kind: 'ok' };
}

function signedDelivery(index: number): { headers: Record<string, string>; body: string } {
  const body = JSON.stringify({
    event: 'churn_risk_alert',
    userId: `load_${index}`,
    score: 0.5 + (index % 50) / 100,
    tier: 'high',
    signals: ['activity_drop'],
    recommendation: 'Call them.',
    triggeredAt: new Date(NOW_MS - index * 1000).toISOString(),
  });
  const { signature, timestamp } = signPayload({ body, secret: LOAD_SECRET, timestamp: NOW_S });
  return {
    headers: {
      'content-type': 'application/json',
      'x-service-signature': signature,
      'x-service-timestamp': timestamp,
    },
    body,
  };
}

const indexOf = (userId: string): number => Number(userId.slice('load_'.length));

/** Runs a full GC twice: V8's `gc` is turned on through its flags (vitest workers lack `--expose-gc`). */
export async function forceGc(): Promise<void> {
  const v8 = await import('node:v8');
  const { runInNewContext } = await import('node:vm');
  v8.setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (() => void) | undefined;
  gc?.();
  await delay(10);
  gc?.();
}

/** A gate opened once; awaiting it after that costs nothing. */
function openOnce(): { promise: Promise<void>; open: () => void; isOpen: () => boolean } {
  let open!: () => void;
  let opened = false;
  const promise = new Promise<void>((resolve) => {
    open = () => {
      opened = true;
      resolve();
    };
  });
  return { promise, open, isOpen: () => opened };
}

/**
 * Runs the scenario against `serve`: first pass over every alert (plus duplicates), then resend
 * rounds of the refused ones (after a drain, as a sender honouring Retry-After would) until every
 * alert was accepted, then drains and reports.
 */
export async function runAlertLoad(serve: ServeReceiver, plan: LoadPlan): Promise<LoadReport> {
  const n = plan.alerts;
  const fates = Array.from({ length: n }, (_, index) => fateOf(plan, index));
  const deliveries = Array.from({ length: n }, (_, index) => signedDelivery(index));
  const report: LoadReport = {
    fates,
    accepted: new Array<number>(n).fill(0),
    refused: new Array<number>(n).fill(0),
    duplicatesSent: 0,
    duplicateAnswers: 0,
    wellFormedRefusals: 0,
    unexpected: [],
    queueAtRefusal: [],
    tries: new Array<number>(n).fill(0),
    handled: new Array<number>(n).fill(0),
    errors: Array.from({ length: n }, () => []),
    attemptMismatches: 0,
    resendRounds: 0,
    stats: { queued: 0, running: 0, accepted: 0, duplicates: 0, failed: 0, superseded: 0 },
    dedupeSize: 0,
    heapBefore: 0,
    heapAfter: 0,
  };

  // Handlers hold until the first refusal, so that the queue surely fills (no timing luck needed).
  const firstRefusal = openOnce();
  const memory = createMemoryDedupeStore();
  const store = {
    claim: (key: string, ttlMs: number) => memory.claim(key, ttlMs),
    // In async mode the receiver releases a claim only when it refuses the alert; it does so in the
    // same tick as the failed enqueue, so these stats are the queue as the refusal saw it.
    release: (key: string) => {
      const { queued, running } = receiver.stats;
      report.queueAtRefusal.push({ queued, running });
      firstRefusal.open();
      memory.release(key);
    },
  };
  const receiver: Receiver = createReceiver({
    secret: LOAD_SECRET,
    now: () => NOW_MS,
    concurrency: plan.concurrency,
    maxQueue: plan.maxQueue,
    retries: { retries: plan.retries, backoffMs: () => 0 },
    dedupe: { store },
  });
  receiver.on('churn_risk_alert', async (alert, context) => {
    const index = indexOf(alert.userId);
    if (context.attempt !== report.tries[index]) report.attemptMismatches++;
    report.tries[index] = (report.tries[index] ?? 0) + 1;
    if (!firstRefusal.isOpen()) await firstRefusal.promise;
    const sleepMs = Math.floor(
      drawFor(plan.seed, 'sleep', index, context.attempt) * (plan.maxSleepMs + 1),
    );
    await delay(sleepMs);
    const fate = fates[index];
    if (
      fate?.kind === 'permanent' ||
      (fate?.kind === 'transient' && context.attempt < fate.failures)
    ) {
      throw new Error(`planned failure of alert ${index}, try ${context.attempt}`);
    }
    report.handled[index] = (report.handled[index] ?? 0) + 1;
  });
  receiver.onError((error, alert, context) => {
    const message = error instanceof Error ? error.message : String(error);
    report.errors[indexOf(alert.userId)]?.push({ message, attempt: context.attempt });
  });

  const served = await serve(receiver);
  const agent = keepAliveAgent(plan.workers);
  try {
    await forceGc();
    report.heapBefore = process.memoryUsage().heapUsed;

    type Job = { index: number; duplicate: boolean };
    const sendJob = async ({ index, duplicate }: Job, jobs: Job[], refused: number[]) => {
      const delivery = deliveries[index]!;
      const answer = await send(agent, served.url, { method: 'POST', ...delivery });
      const retryAfter = answer.headers['retry-after'];
      if (duplicate) {
        if (answer.status === 202 && answer.body === '{"received":true,"duplicate":true}') {
          report.duplicateAnswers++;
        } else report.unexpected.push({ index, status: answer.status, body: answer.body });
      } else if (answer.status === 202 && answer.body === '{"received":true}') {
        report.accepted[index]!++;
        if (drawFor(plan.seed, 'duplicate', index) < plan.duplicateRate) {
          report.duplicatesSent++;
          jobs.push({ index, duplicate: true });
        }
      } else if (answer.status === 503) {
        report.refused[index]!++;
        refused.push(index);
        const code = (JSON.parse(answer.body) as { error?: { code?: string } }).error?.code;
        if (code === 'OVERLOADED' && typeof retryAfter === 'string' && /^\d+$/.test(retryAfter)) {
          report.wellFormedRefusals++;
        }
      } else {
        report.unexpected.push({ index, status: answer.status, body: answer.body });
      }
    };

    const pass = async (indices: readonly number[]): Promise<number[]> => {
      const jobs: Job[] = indices.map((index) => ({ index, duplicate: false }));
      const refused: number[] = [];
      let cursor = 0;
      await runPool(
        plan.workers,
        () => (cursor < jobs.length ? jobs[cursor++] : undefined),
        (job) => sendJob(job, jobs, refused),
      );
      return refused;
    };

    let refused = await pass(Array.from({ length: n }, (_, index) => index));
    firstRefusal.open(); // never leave handlers held, even if nothing was refused
    while (refused.length > 0 && report.resendRounds < 100) {
      report.resendRounds++;
      await receiver.drain({ timeoutMs: 60_000 });
      refused = await pass(refused.sort((a, b) => a - b));
    }
    await receiver.drain({ timeoutMs: 60_000 });
    report.stats = receiver.stats;
    report.dedupeSize = memory.size;
    await forceGc();
    report.heapAfter = process.memoryUsage().heapUsed;
  } finally {
    agent.destroy();
    await served.close();
    await receiver.close({ timeoutMs: 10_000 });
  }
  return report;
}
