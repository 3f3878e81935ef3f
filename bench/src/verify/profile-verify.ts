/**
 * Runs one verification path alone in a tight loop, for a CPU profile:
 *   node --conditions=@churn-risk/source --import tsx --cpu-prof --cpu-prof-dir=bench/results/prof \
 *     bench/src/verify/profile-verify.ts verifySignature [seconds]
 * Paths: bare, verifier (createVerifier), verifySignature. ~250-byte alert body.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createVerifier, verifySignature } from '@churn-risk/core';
import { alertBody, SECRET, signHeaders } from '../lib/alert.js';

const body = Buffer.from(alertBody());
const headers = signHeaders(body);
const delivery = {
  body,
  signature: headers['x-service-signature'],
  timestamp: headers['x-service-timestamp'],
};
const verifier = createVerifier({ secret: SECRET });
const key = Buffer.from(SECRET);

const PATHS: Record<string, () => void> = {
  bare: () => {
    const given = Buffer.from(delivery.signature.slice(7), 'hex');
    const mac = createHmac('sha256', key)
      .update(delivery.timestamp)
      .update('.')
      .update(body)
      .digest();
    if (!timingSafeEqual(given, mac)) throw new Error('no match');
  },
  verifier: () => verifier(delivery),
  // Options written out, as in the documented example: a spread (`{ ...delivery, secret }`) costs
  // the caller ~2 µs per call in object building alone, more than the rest of the overhead.
  verifySignature: () =>
    verifySignature({
      body: delivery.body,
      signature: delivery.signature,
      timestamp: delivery.timestamp,
      secret: SECRET,
    }),
};

const name = process.argv[2] ?? 'verifySignature';
const seconds = Number(process.argv[3] ?? '5');
const fn = PATHS[name];
if (fn === undefined) throw new Error(`unknown path "${name}": ${Object.keys(PATHS).join(', ')}`);
const started = performance.now();
let ops = 0;
while (performance.now() - started < seconds * 1000) {
  for (let i = 0; i < 1000; i++) fn();
  ops += 1000;
}
console.log(
  `${name}: ${Math.round(ops / seconds).toLocaleString('en-US')} ops/s (alone, ${seconds} s)`,
);
