/**
 * The receiver's per-delivery cost without HTTP, for a CPU profile: fresh signed alerts through
 * `receiver.handle` (default receiver, one no-op handler) against a hand-written check (HMAC,
 * timingSafeEqual, tolerance, JSON.parse), each alone in a loop:
 *   node --conditions=@churn-risk/source --import tsx [--cpu-prof --cpu-prof-dir=bench/results/prof] \
 *     bench/src/verify/profile-receiver.ts receiver [seconds]
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createReceiver } from '@churn-risk/core';
import { alertBody, SECRET, signHeaders } from '../lib/alert.js';

interface Delivery {
  body: Buffer;
  headers: Record<string, string>;
}

const POOL = 20_000;
function deliveries(): Delivery[] {
  return Array.from({ length: POOL }, () => {
    const text = alertBody();
    return {
      body: Buffer.from(text),
      headers: { 'content-type': 'application/json', host: 'localhost', ...signHeaders(text) },
    };
  });
}

function hand({ body, headers }: Delivery): void {
  const signature = headers['x-service-signature'];
  const timestamp = headers['x-service-timestamp'];
  if (signature === undefined || timestamp === undefined) throw new Error('headers');
  if (!/^\d{1,12}$/.test(timestamp) || !signature.startsWith('sha256=')) throw new Error('format');
  const given = Buffer.from(signature.slice(7), 'hex');
  const mac = createHmac('sha256', SECRET).update(timestamp).update('.').update(body).digest();
  if (given.length !== mac.length || !timingSafeEqual(given, mac)) throw new Error('signature');
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) throw new Error('tolerance');
  const alert = JSON.parse(body.toString('utf8')) as { event?: unknown };
  if (alert.event !== 'churn_risk_alert') throw new Error('event');
}

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
  const pool = deliveries(); // fresh identities each pass: the dedupe never short-circuits
  const passStart = performance.now();
  if (name === 'hand') {
    for (const d of pool) hand(d);
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
