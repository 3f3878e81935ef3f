/**
 * Variants of the hand-written Fastify route, each adding one thing the plugin does (issue 12's
 * suspects), for `compare.ts`: what each costs, measured side by side with the hand-written route
 * and the plugin. Not part of `pnpm bench`.
 */
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { createReceiver, createVerifier, parseEvent, type Receiver } from '@churn-risk/core';
import {
  createMemoryDedupeStore,
  type AcceptResult,
  type AlertProcessor,
  type AlertQueue,
  type DedupeStore,
  type AlertRecord,
} from '@churn-risk/core/store';
import { churnRiskPlugin } from '@churn-risk/fastify';
import { SECRET, WEBHOOK_PATH } from '../lib/alert.js';
import { rawBodyOfAnyType } from '../lib/fastify-raw-body.js';
import { handVerified } from '../lib/hand-check.js';

/** The in-memory queue's signal: never aborted. */
const NEVER_ABORTED = new AbortController().signal;

const ACCEPTED = { received: true };
const ACCEPTED_JSON = JSON.stringify(ACCEPTED);
const RAW_TYPE = 'application/octet-stream';
const METHODS = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'];

const headerOf = (value: string | string[] | undefined): string | undefined =>
  typeof value === 'string' ? value : undefined;

const SETTLED: Exclude<AcceptResult, string> = { done: Promise.resolve() };
const TTL_MS = 72 * 3600 * 1000;

/**
 * An experimental queue, NOT the product's semantics (no concurrency bound, no `maxQueue`, one
 * shared `done` for every alert): the default dedupe store's claim (or none), an array, and one
 * `setImmediate` per turn that runs the alerts' handlers. It measures what the default queue's
 * per-alert objects (job, `done` promise and its resolver) cost under HTTP load.
 */
function leanQueue(dedupe: boolean): AlertQueue {
  const store = dedupe ? createMemoryDedupeStore() : undefined;
  let processor: AlertProcessor | undefined;
  let pending: AlertRecord<'accepted'>[] = [];
  const run = (): void => {
    const batch = pending;
    pending = [];
    for (const entry of batch) {
      // One try of each handler, no retries: the lean variant measures the queue, not the protocol.
      const input = processor?.input(entry);
      if (input === undefined) continue;
      const context = {
        id: input.id,
        receivedAt: new Date(input.receivedAt),
        attempt: 0,
        event: 'churn_risk_alert' as const,
        signal: NEVER_ABORTED,
        stalls: 0,
        handlerId: undefined,
        idempotencyKey: input.id,
      };
      for (const { handler } of input.handlers) void handler(input.alert, context);
    }
  };
  return {
    kind: 'lean',
    processesInline: false,
    attach(attached) {
      processor = attached;
    },
    accept(entry) {
      if (store !== undefined && !store.claim(entry.id, TTL_MS)) return 'duplicate';
      if (pending.push(entry) === 1) setImmediate(run);
      return SETTLED;
    },
    release(id) {
      store?.release(id);
    },
    consume: () => undefined,
    idle: () => Promise.resolve(),
    close: () => Promise.resolve(),
    queued: 0,
    running: 0,
  };
}

/**
 * An experimental dedupe store (issue 12's proposal), NOT a drop-in for the default: identities
 * are kept as a 64-bit hash (two 32-bit hashes) in typed arrays, no string or `Map` entry per
 * identity, in two generations of open-addressing tables of 50,000 entries each (so it remembers
 * the last 50,000-100,000 identities by first sight, not an LRU of exactly 100,000). Two different
 * identities with the same 64-bit hash would be taken for a duplicate (chance ~5e-15 per delivery
 * at 100,000 entries).
 */
export function hashDedupeStore(now: () => number = Date.now): DedupeStore {
  const SLOTS = 1 << 17;
  const MASK = SLOTS - 1;
  const PER_GENERATION = 50_000;
  const table = () => ({
    h1: new Uint32Array(SLOTS),
    h2: new Uint32Array(SLOTS),
    expires: new Float64Array(SLOTS), // 0: empty slot
    count: 0,
  });
  let current = table();
  let previous = table();
  let h1 = 0;
  let h2 = 0;
  const hash = (key: string): void => {
    let a = 0x811c9dc5;
    let b = 0x9747b28c;
    for (let i = 0; i < key.length; i++) {
      const c = key.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995);
      b ^= b >>> 15;
    }
    h1 = a >>> 0;
    h2 = b >>> 0;
  };
  /** The slot holding the current hash in `t`, or the empty slot where it would go (as ~slot). */
  const find = (t: ReturnType<typeof table>): number => {
    for (let slot = h1 & MASK; ; slot = (slot + 1) & MASK) {
      if (t.expires[slot] === 0) return ~slot;
      if (t.h1[slot] === h1 && t.h2[slot] === h2) return slot;
    }
  };
  return {
    claim(key, ttlMs) {
      hash(key);
      const at = now();
      for (const t of [current, previous]) {
        const slot = find(t);
        if (slot >= 0 && (t.expires[slot] as number) > at) return false;
        if (slot >= 0) {
          t.expires[slot] = at + ttlMs; // expired: claim it again in place
          return true;
        }
      }
      if (current.count === PER_GENERATION) {
        previous = current;
        current = table();
      }
      const slot = ~find(current);
      current.h1[slot] = h1;
      current.h2[slot] = h2;
      current.expires[slot] = at + ttlMs;
      current.count++;
      return true;
    },
    release(key) {
      hash(key);
      for (const t of [current, previous]) {
        const slot = find(t);
        if (slot >= 0) t.expires[slot] = 1; // kept as a tombstone that is always expired
      }
    },
  };
}

function receiver(dedupe = true): Receiver {
  const r = createReceiver({ secret: SECRET, ...(dedupe ? {} : { dedupe: false }) });
  r.on('churn_risk_alert', () => undefined);
  return r;
}

const verified = (request: FastifyRequest): boolean =>
  handVerified(
    request.body,
    headerOf(request.headers['x-service-signature']),
    headerOf(request.headers['x-service-timestamp']),
  );

type Setup = (app: FastifyInstance) => void | Promise<void>;

/** A Fastify app with no content-type parsers, set up by `setup`, ready (not listening). */
export async function variantApp(setup: Setup): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  app.removeAllContentTypeParsers();
  await setup(app);
  await app.ready();
  return app;
}

/**
 * The plugin's content-type handling before issue 12: an `onRequest` hook swaps in `RAW_TYPE` (so
 * one parser takes every body as bytes) and keeps the original in a WeakMap; the returned
 * function puts it back in the route's handler.
 */
function contentTypeHook(app: FastifyInstance): (request: FastifyRequest) => void {
  const original = new WeakMap<FastifyRequest, string>();
  app.addContentTypeParser(RAW_TYPE, { parseAs: 'buffer' }, (_request, body, done) => {
    done(null, body);
  });
  app.addHook('onRequest', (request, _reply, done) => {
    const type = request.headers['content-type'];
    if (type !== undefined) original.set(request, type);
    request.headers['content-type'] = RAW_TYPE;
    done();
  });
  return (request) => {
    const type = original.get(request);
    if (type === undefined) delete request.headers['content-type'];
    else request.headers['content-type'] = type;
  };
}

async function handAnswer(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  if (verified(request)) return reply.code(202).send(ACCEPTED);
  return reply.code(401).send({ error: { code: 'INVALID_SIGNATURE', message: 'no' } });
}

/** The receiver's answer, written as the plugin writes it. */
async function receiverAnswer(
  r: Receiver,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const body = request.body instanceof Uint8Array ? request.body : null;
  const result = await r.handle({ method: request.method, headers: request.headers, body });
  return reply.code(result.status).headers(result.headers).send(result.body);
}

/** Each variant's setup of an app that has no content-type parsers. */
export const FASTIFY_SETUPS: Record<string, Setup> = {
  /** The hand-written route of `fastify-hand`. */
  'fx-hand': (app) => {
    rawBodyOfAnyType(app);
    app.post(WEBHOOK_PATH, handAnswer);
  },
  /** The plugin, as `fastify-ours` registers it. */
  'fx-ours': async (app) => {
    await app.register(churnRiskPlugin, { receiver: receiver(), path: WEBHOOK_PATH });
  },
  /** The hand-written route plus the plugin's onRequest content-type hook and its WeakMap. */
  'fx-hand-hook': (app) => {
    const restoreContentType = contentTypeHook(app);
    app.post(WEBHOOK_PATH, async (request, reply) => {
      restoreContentType(request);
      return handAnswer(request, reply);
    });
  },
  /** The hand-written route registered for every method. */
  'fx-hand-methods': (app) => {
    rawBodyOfAnyType(app);
    app.route({ method: METHODS, url: WEBHOOK_PATH, handler: handAnswer });
  },
  /** The hand-written route with a synchronous handler. */
  'fx-hand-sync': (app) => {
    rawBodyOfAnyType(app);
    app.post(WEBHOOK_PATH, (request, reply) => {
      if (verified(request)) void reply.code(202).send(ACCEPTED);
      else void reply.code(401).send({ error: { code: 'INVALID_SIGNATURE', message: 'no' } });
    });
  },
  /** The hand-written route answering with `reply.headers(object)` and a string body. */
  'fx-hand-headers': (app) => {
    rawBodyOfAnyType(app);
    app.post(WEBHOOK_PATH, async (request, reply) => {
      if (!verified(request)) return reply.code(401).send('no');
      return reply.code(202).headers({ 'content-type': 'application/json' }).send(ACCEPTED_JSON);
    });
  },
  /** The hand-written route's shape, with the receiver's `handle` in place of the check. */
  'fx-hand-receiver': (app) => {
    const r = receiver();
    rawBodyOfAnyType(app);
    app.post(WEBHOOK_PATH, (request, reply) => receiverAnswer(r, request, reply));
  },
  /** As `fx-hand-receiver`, with a receiver without dedupe. */
  'fx-hand-receiver-nodedupe': (app) => {
    const r = receiver(false);
    rawBodyOfAnyType(app);
    app.post(WEBHOOK_PATH, (request, reply) => receiverAnswer(r, request, reply));
  },
  /** The hand-written route with the core's verifier and zod parsing in place of the check. */
  'fx-hand-verifier': (app) => {
    const verify = createVerifier({ secret: SECRET });
    rawBodyOfAnyType(app);
    app.post(WEBHOOK_PATH, async (request, reply) => {
      const body = request.body as Uint8Array;
      verify({
        body,
        signature: headerOf(request.headers['x-service-signature']),
        timestamp: headerOf(request.headers['x-service-timestamp']),
      });
      const parsed = parseEvent(body);
      if (parsed.kind !== 'known') throw new Error('not an alert');
      return reply.code(202).send(ACCEPTED);
    });
  },
  /** The hand-written route plus one `setImmediate` per event-loop turn, as the receiver's queue defers its handlers. */
  'fx-hand-immediate': (app) => {
    let scheduled = false;
    const tick = (): void => {
      scheduled = false;
    };
    rawBodyOfAnyType(app);
    app.post(WEBHOOK_PATH, async (request, reply) => {
      if (!scheduled) {
        scheduled = true;
        setImmediate(tick);
      }
      return handAnswer(request, reply);
    });
  },
  /** The plugin's route without the content-type hook (catch-all raw parser), non-async handler. */
  'fx-plugin-nohook': (app) => {
    const r = receiver();
    rawBodyOfAnyType(app);
    app.route({
      method: METHODS,
      url: WEBHOOK_PATH,
      bodyLimit: r.maxBodyBytes,
      handler(request, reply) {
        const body = request.body instanceof Uint8Array ? request.body : null;
        void r.handle({ method: request.method, headers: request.headers, body }).then((result) => {
          void reply.code(result.status).headers(result.headers).send(result.body);
        });
      },
    });
  },
  /** The plugin as it was before issue 12 (hook and WeakMap, every method, async handler). */
  'fx-plugin-before': (app) => {
    const r = receiver();
    const restoreContentType = contentTypeHook(app);
    app.route({
      method: METHODS,
      url: WEBHOOK_PATH,
      bodyLimit: r.maxBodyBytes,
      async handler(request, reply) {
        restoreContentType(request);
        return receiverAnswer(r, request, reply);
      },
    });
  },
  /** The plugin's route with its content-type hook and WeakMap, non-async handler. */
  'fx-plugin-hook-sync': (app) => {
    const r = receiver();
    const restoreContentType = contentTypeHook(app);
    app.route({
      method: METHODS,
      url: WEBHOOK_PATH,
      bodyLimit: r.maxBodyBytes,
      handler(request, reply) {
        restoreContentType(request);
        const body = request.body instanceof Uint8Array ? request.body : null;
        void r.handle({ method: request.method, headers: request.headers, body }).then((result) => {
          void reply.code(result.status).headers(result.headers).send(result.body);
        });
      },
    });
  },
  /** `fx-hand-receiver` with the experimental `leanQueue` (the default store's claim). */
  'fx-hand-receiver-leanqueue': (app) => {
    const r = createReceiver({ secret: SECRET, queue: leanQueue(true) });
    r.on('churn_risk_alert', () => undefined);
    rawBodyOfAnyType(app);
    app.post(WEBHOOK_PATH, (request, reply) => receiverAnswer(r, request, reply));
  },
  /** `fx-hand-receiver` with the experimental `leanQueue` and no dedupe at all. */
  'fx-hand-receiver-leanqueue-nodedupe': (app) => {
    const r = createReceiver({ secret: SECRET, queue: leanQueue(false) });
    r.on('churn_risk_alert', () => undefined);
    rawBodyOfAnyType(app);
    app.post(WEBHOOK_PATH, (request, reply) => receiverAnswer(r, request, reply));
  },
  /** `fx-hand-receiver` with the experimental `hashDedupeStore` as its dedupe store. */
  'fx-hand-receiver-hashstore': (app) => {
    const r = createReceiver({ secret: SECRET, dedupe: { store: hashDedupeStore() } });
    r.on('churn_risk_alert', () => undefined);
    rawBodyOfAnyType(app);
    app.post(WEBHOOK_PATH, (request, reply) => receiverAnswer(r, request, reply));
  },
};

/** The variants as HTTP servers for `compare.ts` (`server.ts <name>`). */
export const FASTIFY_VARIANTS: Record<string, () => Promise<number>> = Object.fromEntries(
  Object.entries(FASTIFY_SETUPS).map(([name, setup]) => [
    name,
    async () => {
      const app = await variantApp(setup);
      await app.listen({ port: 0, host: '127.0.0.1' });
      return (app.server.address() as AddressInfo).port;
    },
  ]),
);
