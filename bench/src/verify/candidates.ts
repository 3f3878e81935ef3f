import { createHmac, timingSafeEqual } from 'node:crypto';
import { verify as octokitVerify } from '@octokit/webhooks-methods';
import Stripe from 'stripe';
import { Webhook as SvixWebhook } from 'svix';
import { createVerifier, verifySignature } from '@churn-risk/core';
import { SECRET, signHeaders } from '../lib/alert.js';
import type { Candidate } from '../lib/round-robin.js';
import { assertUsesBackend, loadNobleVerifier } from './noble-verifier.js';

export const BARE = 'node:crypto HMAC + timingSafeEqual (bare limit)';
export const OURS_NODE = 'ours: verifySignature (node:crypto)';
export const OURS_VERIFIER_NODE = 'ours: createVerifier (node:crypto)';
export const OURS_VERIFIER_NOBLE = 'ours: createVerifier (@noble/hashes)';
export const OURS_NAMES: readonly string[] = [OURS_NODE, OURS_VERIFIER_NODE, OURS_VERIFIER_NOBLE];

const stripe = new Stripe('sk_test_bench_never_used_for_requests');
const STRIPE_SECRET = 'whsec_stripe_bench_secret';
const SVIX_SECRET = `whsec_${Buffer.from('svix bench secret, 24+ bytes long!').toString('base64')}`;
const svix = new SvixWebhook(SVIX_SECRET);
const noble = await loadNobleVerifier();

/**
 * One delivery signed in every scheme. `received` is what the receiver got; with `tamper`, one
 * byte differs from what was signed, so every candidate must reject it.
 */
interface Delivery {
  buffer: Buffer;
  text: string;
  ours: { signature: string; timestamp: string };
  octokit: string;
  stripe: string;
  svix: Record<string, string>;
}

function delivery(body: string, tamper: boolean): Delivery {
  const now = Math.floor(Date.now() / 1000);
  const ours = signHeaders(body, SECRET, now);
  const svixId = 'msg_bench_0001';
  const signed = {
    ours: { signature: ours['x-service-signature'], timestamp: ours['x-service-timestamp'] },
    octokit: `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
    stripe: stripe.webhooks.generateTestHeaderString({
      payload: body,
      secret: STRIPE_SECRET,
      timestamp: now,
    }),
    svix: {
      'svix-id': svixId,
      'svix-timestamp': String(now),
      'svix-signature': svix.sign(svixId, new Date(now * 1000), body),
    },
  };
  // Flip one character in the middle of the body (still valid JSON: it is inside a string).
  const text = tamper ? body.replace('"tier":"high"', '"tier":"hihg"') : body;
  return { ...signed, text, buffer: Buffer.from(text) };
}

/**
 * The candidates for one body. Each gets the body in the form its API takes best: ours and the
 * bare limit the raw bytes (a Buffer, as a server receives them), octokit a string (its only
 * form), Stripe and svix a string (they accept either; a string spares them a decode). Every
 * candidate throws when the signature does not match, so a skipped check cannot look fast.
 */
function candidatesFor(d: Delivery): Candidate[] {
  const key = Buffer.from(SECRET);
  const oursVerifier = createVerifier({ secret: SECRET });
  const nobleVerifier = noble.createVerifier({ secret: SECRET });
  const ours = { body: d.buffer, signature: d.ours.signature, timestamp: d.ours.timestamp };
  return [
    {
      name: BARE,
      fn: () => {
        const header = d.ours.signature;
        if (!header.startsWith('sha256=')) throw new Error('bad scheme');
        const given = Buffer.from(header.slice(7), 'hex');
        const mac = createHmac('sha256', key)
          .update(d.ours.timestamp)
          .update('.')
          .update(d.buffer)
          .digest();
        if (given.length !== mac.length || !timingSafeEqual(given, mac))
          throw new Error('no match');
      },
    },
    {
      // Options written out as in the documented example (a spread would measure object building).
      name: OURS_NODE,
      fn: () =>
        verifySignature({
          body: ours.body,
          signature: ours.signature,
          timestamp: ours.timestamp,
          secret: SECRET,
        }),
    },
    { name: OURS_VERIFIER_NODE, fn: () => oursVerifier(ours) },
    { name: OURS_VERIFIER_NOBLE, fn: () => nobleVerifier(ours) },
    {
      name: '@octokit/webhooks-methods verify (async)',
      async: true,
      fn: async () => {
        if (!(await octokitVerify(SECRET, d.text, d.octokit))) throw new Error('no match');
      },
    },
    {
      name: 'stripe webhooks.constructEvent (verify + JSON.parse)',
      fn: () => stripe.webhooks.constructEvent(d.text, d.stripe, STRIPE_SECRET),
    },
    {
      name: 'stripe webhooks.signature.verifyHeader (verify only)',
      fn: () => stripe.webhooks.signature.verifyHeader(d.text, d.stripe, STRIPE_SECRET),
    },
    {
      name: 'svix Webhook.verify (verify + JSON.parse)',
      fn: () => svix.verify(d.text, d.svix),
    },
  ];
}

async function succeeds(candidate: Candidate): Promise<boolean> {
  try {
    await candidate.fn();
    return true;
  } catch {
    return false;
  }
}

/**
 * The candidates for `body`, after checking that each accepts the genuine delivery and rejects a
 * tampered one, and that the noble candidate really runs on @noble/hashes.
 */
export async function verifiedCandidates(body: string): Promise<Candidate[]> {
  const good = candidatesFor(delivery(body, false));
  const bad = candidatesFor(delivery(body, true));
  for (const [i, candidate] of good.entries()) {
    if (!(await succeeds(candidate))) throw new Error(`${candidate.name} rejects a valid delivery`);
    if (await succeeds(bad[i] as Candidate)) {
      throw new Error(`${candidate.name} accepts a tampered delivery`);
    }
  }
  const nobleCandidate = good.find((c) => c.name === OURS_VERIFIER_NOBLE);
  assertUsesBackend(noble.backend, () => nobleCandidate?.fn());
  return good;
}
