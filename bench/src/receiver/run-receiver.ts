import { setImmediate as nextTurn } from 'node:timers/promises';
import { createReceiver, createVerifier, parseEvent, type Receiver } from '@churn-risk/core';
import { SECRET } from '../lib/alert.js';
import { signedDelivery, type Delivery } from '../lib/delivery.js';
import { handCheck } from '../lib/hand-check.js';
import { roundRobin, type Candidate } from '../lib/round-robin.js';
import { formatNumber, formatRatio, markdownTable } from '../lib/table.js';
import type { BenchResult, BenchSettings } from '../lib/types.js';

/**
 * Distinct signed deliveries, one after the other. `cycle`: start over at the end (for candidates
 * that remember nothing); otherwise running out is an error, as a repeated identity would take
 * the receiver's duplicate shortcut and flatter it.
 */
function pool(size: number, cycle: boolean): () => Delivery {
  const deliveries = Array.from({ length: size }, signedDelivery);
  let next = 0;
  return () => {
    if (cycle && next === size) next = 0;
    const delivery = deliveries[next++];
    if (delivery === undefined) throw new Error(`the pool of ${size} deliveries ran out`);
    return delivery;
  };
}

/** `receiver.handle` with a 202 check; every 256 deliveries the queued handlers get a turn. */
function handling(receiver: Receiver, take: () => Delivery): () => Promise<void> {
  let count = 0;
  return async () => {
    const { body, headers } = take();
    const result = await receiver.handle({ method: 'POST', headers, body });
    if (result.status !== 202) throw new Error(`got ${result.status}: ${result.body}`);
    if (++count % 256 === 0) await nextTurn(); // handlers run on later turns: include their cost
  };
}

const HAND = 'hand-written check (HMAC, timingSafeEqual, tolerance, JSON.parse)';

/**
 * The receiver's own cost per delivery, without HTTP: what each layer adds to a hand-written
 * check. One process, candidates interleaved round by round, each delivery fresh and signed.
 */
export async function runReceiver(settings: BenchSettings): Promise<BenchResult> {
  // Enough fresh identities for the default receiver's calibration, warm-up and rounds.
  const size = settings.quick ? 20_000 : 80_000;
  const verifier = createVerifier({ secret: SECRET });
  const noop = (): void => undefined;
  const withDedupe = createReceiver({ secret: SECRET, maxQueue: size });
  withDedupe.on('churn_risk_alert', noop);
  const withoutDedupe = createReceiver({ secret: SECRET, maxQueue: size, dedupe: false });
  withoutDedupe.on('churn_risk_alert', noop);

  // The candidates that remember nothing share a smaller cycling pool.
  const takeShared = pool(10_000, true);
  const takeFresh = pool(size, false);
  const candidates: Candidate[] = [
    { name: HAND, fn: () => handCheck(takeShared()) },
    {
      name: 'createVerifier + parseEvent (zod)',
      fn: () => {
        const { body, headers } = takeShared();
        verifier({
          body,
          signature: headers['x-service-signature'],
          timestamp: headers['x-service-timestamp'],
        });
        parseEvent(body);
      },
    },
    {
      name: 'receiver.handle, dedupe off (+ queue, no-op handler)',
      fn: handling(withoutDedupe, takeShared),
      async: true,
    },
    {
      name: 'receiver.handle, default receiver (+ dedupe)',
      fn: handling(withDedupe, takeFresh),
      async: true,
    },
  ];
  // CHURN_RISK_BENCH_BASELINE_CORE=<path to another build's dist/index.js> adds that build's
  // default receiver to the same run (e.g. the previous commit, to show a change costs nothing).
  const baselinePath = process.env.CHURN_RISK_BENCH_BASELINE_CORE;
  const baselineReceivers: Receiver[] = [];
  if (baselinePath !== undefined && baselinePath !== '') {
    const baseline = (await import(baselinePath)) as { createReceiver: typeof createReceiver };
    // The same two receivers as above, so both builds' code sees the same variety of callers.
    const variants: [string, Partial<Parameters<typeof createReceiver>[0]>, boolean][] = [
      ['dedupe off (+ queue, no-op handler)', { dedupe: false }, true],
      ['default receiver (+ dedupe)', {}, false],
    ];
    for (const [label, extra, cycle] of variants) {
      const receiver = baseline.createReceiver({ secret: SECRET, maxQueue: size, ...extra });
      receiver.on('churn_risk_alert', noop);
      baselineReceivers.push(receiver);
      candidates.push({
        name: `baseline build: receiver.handle, ${label}`,
        fn: handling(receiver, cycle ? takeShared : pool(size, false)),
        async: true,
      });
    }
  }
  const results = await roundRobin(candidates, {
    rounds: settings.quick ? 3 : 10,
    batchMs: settings.quick ? 20 : 50,
  });
  await Promise.all([withDedupe, withoutDedupe, ...baselineReceivers].map((r) => r.close()));

  const hand = results.find((r) => r.name === HAND)?.opsPerSecond ?? Number.NaN;
  const rows = results.map((r) => [
    r.name,
    formatNumber(r.opsPerSecond),
    formatNumber(1e6 / r.opsPerSecond),
    formatNumber(1e6 / r.opsPerSecond - 1e6 / hand),
    formatRatio(r.opsPerSecond / hand),
    formatNumber(r.minOpsPerSecond),
  ]);
  const table = markdownTable(
    [
      'candidate',
      'deliveries/s (median)',
      'µs per delivery',
      'µs over the hand-written check',
      'vs hand-written',
      'worst round',
    ],
    rows,
  );
  const notes = [
    'In one process, no HTTP: each operation takes the next of a pool of signed ~250-byte alerts',
    '(as a Node server hands them over: a Buffer and a headers record); the default receiver never',
    'sees an identity twice, so its dedupe never short-circuits. Candidates interleaved round by round (median of the rounds). The receivers',
    'run their no-op handler on later turns of the event loop (a turn every 256 deliveries),',
    'and that cost is included.',
  ].join(' ');
  return {
    name: 'receiver',
    title: "The receiver's own cost per delivery (no HTTP)",
    markdown: `${table}\n\n${notes}`,
    data: results,
  };
}
