import { setImmediate as nextTurn } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import * as afterCore from '@churn-risk/core';
import type { Receiver } from '@churn-risk/core';
import { SECRET } from '../lib/alert.js';
import { signedDelivery, type Delivery } from '../lib/delivery.js';
import { handCheck } from '../lib/hand-check.js';
import { roundRobin, type Candidate } from '../lib/round-robin.js';
import { beforeLabel, importBefore, type PackageModules } from '../lib/packages.js';
import { formatNumber, formatRatio, markdownTable, median } from '../lib/table.js';
import type { BenchResult, BenchSettings } from '../lib/types.js';

/**
 * `deliveries` (distinct and signed), one after the other. `cycle`: start over at the end (for
 * candidates that remember nothing); otherwise running out is an error, as a repeated identity
 * would take the receiver's duplicate shortcut and flatter it. Each receiver that remembers takes
 * from its own cursor, so the after and before receivers share one array.
 */
function pool(deliveries: readonly Delivery[], cycle: boolean): () => Delivery {
  const size = deliveries.length;
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

type Core = PackageModules['@churn-risk/core'];

/** Our cases, built from one build of core: the working tree's, or the before build's. */
function ourCases(
  core: Core,
  fresh: readonly Delivery[],
  takeShared: () => Delivery,
): { cases: [string, Candidate['fn'], boolean][]; receivers: Receiver[] } {
  const verifier = core.createVerifier({ secret: SECRET });
  const noop = (): void => undefined;
  const withDedupe = core.createReceiver({ secret: SECRET, maxQueue: fresh.length });
  withDedupe.on('churn_risk_alert', noop);
  const withoutDedupe = core.createReceiver({
    secret: SECRET,
    maxQueue: fresh.length,
    dedupe: false,
  });
  withoutDedupe.on('churn_risk_alert', noop);
  return {
    cases: [
      [
        'createVerifier + parseEvent (zod)',
        () => {
          const { body, headers } = takeShared();
          verifier({
            body,
            signature: headers['x-service-signature'],
            timestamp: headers['x-service-timestamp'],
          });
          core.parseEvent(body);
        },
        false,
      ],
      [
        'receiver.handle, dedupe off (+ queue, no-op handler)',
        handling(withoutDedupe, takeShared),
        true,
      ],
      // The candidates that remember nothing share a cycling pool; this one gets its own fresh one.
      [
        'receiver.handle, default receiver (+ dedupe)',
        handling(withDedupe, pool(fresh, false)),
        true,
      ],
    ],
    receivers: [withDedupe, withoutDedupe],
  };
}

/**
 * The before build of core (`--before=<git-ref>`), or the older way to name one,
 * `CHURN_RISK_BENCH_BASELINE_CORE=<path to another build's dist/index.js>`.
 */
async function beforeCore(
  settings: BenchSettings,
): Promise<{ label: string; core: Core } | undefined> {
  if (settings.before !== undefined) {
    return {
      label: `before ${beforeLabel(settings.before)}`,
      core: await importBefore('@churn-risk/core'),
    };
  }
  const path = process.env.CHURN_RISK_BENCH_BASELINE_CORE;
  if (path === undefined || path === '') return undefined;
  return { label: 'baseline build', core: (await import(pathToFileURL(path).href)) as Core };
}

/**
 * The receiver's own cost per delivery, without HTTP: what each layer adds to a hand-written
 * check. One process, candidates interleaved round by round, each delivery fresh and signed.
 * With a before build, each of our cases has a twin on the before build's core, measured in the
 * same rounds (the twins next to each other), and the table shows after / before.
 */
export async function runReceiver(settings: BenchSettings): Promise<BenchResult> {
  // Enough fresh identities for the default receiver's calibration, warm-up and rounds: about
  // twelve batches of `batchMs` (a batch is calibrated to it), at up to 400,000 deliveries/s.
  const fresh = Array.from({ length: settings.quick ? 20_000 : 250_000 }, signedDelivery);
  // The candidates that remember nothing share a smaller cycling pool.
  const takeShared = pool(Array.from({ length: 10_000 }, signedDelivery), true);
  const after = ourCases(afterCore, fresh, takeShared);
  const before = await beforeCore(settings);
  // The same receivers on both builds, so both builds' code sees the same variety of callers.
  const twins = before === undefined ? undefined : ourCases(before.core, fresh, takeShared);

  const candidates: Candidate[] = [{ name: HAND, fn: () => handCheck(takeShared()) }];
  /** After-name -> its before twin's name. */
  const twinOf = new Map<string, string>();
  for (const [i, [name, fn, async]] of after.cases.entries()) {
    candidates.push({ name, fn, async });
    const twin = twins?.cases[i];
    if (before === undefined || twin === undefined) continue;
    const twinName = `${before.label}: ${name}`;
    twinOf.set(name, twinName);
    candidates.push({ name: twinName, fn: twin[1], async: twin[2] });
  }
  const results = await roundRobin(candidates, {
    rounds: settings.quick ? 3 : 10,
    batchMs: settings.quick ? 20 : 50,
  });
  await Promise.all([...after.receivers, ...(twins?.receivers ?? [])].map((r) => r.close()));

  const byName = new Map(results.map((r) => [r.name, r]));
  const hand = byName.get(HAND)?.opsPerSecond ?? Number.NaN;
  /** "1.02x (paired by round 1.01x)": the after case over its before twin, in deliveries/s. */
  const afterOverBefore = (name: string): string => {
    const mine = byName.get(name);
    const twin = byName.get(twinOf.get(name) ?? '');
    if (mine === undefined || twin === undefined) return '';
    const paired = median(
      mine.roundOpsPerSecond.map((ops, i) => ops / (twin.roundOpsPerSecond[i] ?? Number.NaN)),
    );
    return `${formatRatio(mine.opsPerSecond / twin.opsPerSecond)} (paired by round ${formatRatio(paired)})`;
  };
  const rows = results.map((r) => [
    r.name,
    formatNumber(r.opsPerSecond),
    formatNumber(1e6 / r.opsPerSecond),
    formatNumber(1e6 / r.opsPerSecond - 1e6 / hand),
    formatRatio(r.opsPerSecond / hand),
    formatNumber(r.minOpsPerSecond),
    ...(before === undefined ? [] : [afterOverBefore(r.name)]),
  ]);
  const table = markdownTable(
    [
      'candidate',
      'deliveries/s (median)',
      'µs per delivery',
      'µs over the hand-written check',
      'vs hand-written',
      'worst round',
      ...(before === undefined ? [] : ['after / before, deliveries/s']),
    ],
    rows,
  );
  const notes = [
    'In one process, no HTTP: each operation takes the next of a pool of signed ~250-byte alerts',
    '(as a Node server hands them over: a Buffer and a headers record); the default receiver never',
    'sees an identity twice, so its dedupe never short-circuits. Candidates interleaved round by round (median of the rounds). The receivers',
    'run their no-op handler on later turns of the event loop (a turn every 256 deliveries),',
    'and that cost is included.',
  ];
  if (before !== undefined) {
    notes.push(
      `Rows named "${before.label}" run the same case on that build's \`@churn-risk/core\`, in the`,
      'same rounds; "after / before" is this build over it (ratio of the medians, and the median of',
      'the ratios of the same round): below 1.00x the working tree is slower.',
    );
  }
  const verdicts = [...twinOf.keys()].map(
    (name) => `- ${name}: after / before ${afterOverBefore(name)}`,
  );
  return {
    name: 'receiver',
    title: "The receiver's own cost per delivery (no HTTP)",
    markdown: `${table}\n\n${verdicts.length > 0 ? `${verdicts.join('\n')}\n\n` : ''}${notes.join(' ')}`,
    data: results,
  };
}
