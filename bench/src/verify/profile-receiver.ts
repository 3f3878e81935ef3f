/**
 * The receiver's per-delivery cost without HTTP, for a CPU profile: fresh signed alerts through
 * `receiver.handle` (default receiver, one no-op handler) against a hand-written check (HMAC,
 * timingSafeEqual, tolerance, JSON.parse), each alone in a loop:
 *   node --import tsx [--cpu-prof --cpu-prof-dir=bench/results/prof] \
 *     bench/src/verify/profile-receiver.ts receiver|receiver-nodedupe|hand [seconds]
 * (after `pnpm build`; add --conditions=@churn-risk/source to profile the sources).
 */
import { createReceiver } from '@churn-risk/core';
import { SECRET } from '../lib/alert.js';
import { signedDelivery } from '../lib/delivery.js';
import { handCheck } from '../lib/hand-check.js';

const POOL = 20_000;

const name = process.argv[2] ?? 'receiver';
const seconds = Number(process.argv[3] ?? '5');
let handled = 0;
const receiver = createReceiver({
  secret: SECRET,
  maxQueue: 1_000_000,
  ...(name === 'receiver-nodedupe' ? { dedupe: false as const } : {}),
});
receiver.on('churn_risk_alert', () => {
  handled++;
});

let busy = 0;
let ops = 0;
while (busy < seconds * 1000) {
  const pool = Array.from({ length: POOL }, signedDelivery); // fresh identities each pass: the dedupe never short-circuits
  const passStart = performance.now();
  if (name === 'hand') {
    for (const d of pool) handCheck(d);
  } else {
    for (const d of pool) {
      const result = await receiver.handle({ method: 'POST', headers: d.headers, body: d.body });
      if (result.status !== 202) throw new Error(`got ${result.status}: ${result.body}`);
    }
    await receiver.drain();
  }
  busy += performance.now() - passStart; // the signing of the pool is not counted
  ops += pool.length;
}
const rate = Math.round(ops / (busy / 1000)).toLocaleString('en-US');
console.log(`${name}: ${rate} deliveries/s (${handled} handled)`);
