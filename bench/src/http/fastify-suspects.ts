/**
 * The Fastify variants of fastify-variants.ts in one process, through `app.inject` (no sockets,
 * no load generator): what each suspect of issue 12 adds per request, measured round-robin
 * against the hand-written route with much less noise than the HTTP benchmark. Not part of
 * `pnpm bench`:
 *   node --import tsx bench/src/http/fastify-suspects.ts [fx-hand fx-ours ...] [--rounds=10]
 * Every request is a fresh alert signed when sent (the signing is in every candidate's time).
 * Batches are timed in this process's CPU time, so that other work on the machine counts less.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { alertBody, signHeaders, WEBHOOK_PATH } from '../lib/alert.js';
import { roundRobin, type Candidate } from '../lib/round-robin.js';
import { formatNumber, formatRatio, markdownTable } from '../lib/table.js';
import { FASTIFY_SETUPS, variantApp } from './fastify-variants.js';

const args = process.argv.slice(2);
const roundsArg = args.find((a) => a.startsWith('--rounds='));
const named = args.filter((a) => !a.startsWith('--'));
const names = named.length > 0 ? named : Object.keys(FASTIFY_SETUPS);

function injecting(app: FastifyInstance): () => Promise<void> {
  let count = 0;
  return async () => {
    const payload = alertBody();
    const response = await app.inject({
      method: 'POST',
      url: WEBHOOK_PATH,
      headers: { 'content-type': 'application/json', ...signHeaders(payload) },
      payload,
    });
    if (response.statusCode !== 202) {
      throw new Error(`got ${response.statusCode}: ${response.body}`);
    }
    // The receivers' handlers run on later turns of the event loop: include their cost.
    if (++count % 256 === 0) await nextTurn();
  };
}

const candidates: Candidate[] = [];
for (const name of names) {
  const setup = FASTIFY_SETUPS[name];
  if (setup === undefined) throw new Error(`unknown variant ${name}`);
  candidates.push({ name, fn: injecting(await variantApp(setup)), async: true });
}
const results = await roundRobin(candidates, {
  rounds: roundsArg === undefined ? 10 : Number(roundsArg.slice('--rounds='.length)),
  batchMs: 100,
  clock: 'cpu',
});
const base = results[0];
if (base === undefined) throw new Error('no candidate');
const rows = results.map((r) => [
  r.name,
  formatNumber(r.opsPerSecond),
  formatNumber(1e6 / r.opsPerSecond, 1),
  formatNumber(1e6 / r.opsPerSecond - 1e6 / base.opsPerSecond, 1),
  formatRatio(r.opsPerSecond / base.opsPerSecond),
  `${formatNumber(r.minOpsPerSecond)}-${formatNumber(r.maxOpsPerSecond)}`,
]);
console.log(
  markdownTable(
    ['variant', 'requests/s (median)', 'µs per request', `µs over ${base.name}`, 'ratio', 'range'],
    rows,
  ),
);
process.exit(0);
