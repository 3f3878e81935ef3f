/**
 * The event batcher while its API key is refused, against the real sandbox: a small gate in front
 * of a `createSandbox()` forwards every request, but while the key is "revoked" it swaps the
 * `Authorization` header for a key the sandbox does not know, so that the sandbox itself answers
 * `401 UNAUTHORIZED`. Then the key is restored. The batcher keeps the events on
 * 401 (a configuration error, not bad data), reports each refusal to `onError` without dropping
 * anything, and sends everything, once and in order, when the key works again.
 */
import { ChurnRiskClient, ServiceError } from '@churn-risk/core';
import { createSandbox, type Sandbox } from '@churn-risk/sandbox';
import { Agent, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { closeServer, listenLocal } from '../conformance/http-client.js';
import { forward, readAll, relayedHeaders } from './http-relay.js';

const stopList: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stopList.splice(0).reverse()) await stop();
});

interface KeyGate {
  url: string;
  /** While true, requests reach the sandbox with an unknown key. */
  revoked: boolean;
  /** The status of every answer the sandbox gave, in order. */
  readonly statuses: number[];
  /** Resolves when the sandbox has answered `count` requests in all. */
  answered(count: number): Promise<void>;
}

/** A pass-through proxy in front of `target` that can revoke the caller's key (see above). */
async function startKeyGate(target: string): Promise<KeyGate> {
  const upstream = new Agent({ keepAlive: true });
  const to = new URL(target);
  const statuses: number[] = [];
  let waiters: { count: number; resolve: () => void }[] = [];
  const gate: KeyGate = {
    url: '',
    revoked: false,
    statuses,
    answered: (count) =>
      statuses.length >= count
        ? Promise.resolve()
        : new Promise((resolve) => waiters.push({ count, resolve })),
  };
  const relay = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readAll(req);
    const headers = { ...req.headers, host: to.host };
    if (gate.revoked) headers.authorization = 'Bearer sk_revoked_by_the_test_gate';
    const answer = await forward(upstream, to, req, body, headers);
    statuses.push(answer.status);
    const ready = waiters.filter((w) => statuses.length >= w.count);
    waiters = waiters.filter((w) => statuses.length < w.count);
    for (const waiter of ready) waiter.resolve();
    res.writeHead(answer.status, relayedHeaders(answer.headers)).end(answer.body);
  };
  const server = createServer((req, res) => {
    relay(req, res).catch(() => req.socket.destroy());
  });
  gate.url = await listenLocal(server);
  stopList.push(async () => {
    await closeServer(server);
    upstream.destroy();
  });
  return gate;
}

/** `seq` of the stored `batched` events of `userId`, in the order the sandbox stored them. */
function storedSeqs(sandbox: Sandbox, userId: string): number[] {
  return (sandbox.service.users.get(userId)?.events ?? [])
    .filter((item) => item.event === 'batched')
    .map((item) => Number(item.properties?.['seq']));
}

const USERS = 3;
const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from }, (_, i) => from + i);

describe('event batcher and a refused API key (real sandbox)', () => {
  it(
    'keeps every event through a stretch of 401s and sends each once, in order, once the key works again',
    { timeout: 60_000 },
    async () => {
      const sandbox = await createSandbox();
      stopList.push(() => sandbox.close());
      const gate = await startKeyGate(sandbox.url);
      const client = new ChurnRiskClient({
        apiKey: sandbox.apiKey,
        baseUrl: gate.url,
        maxRetries: 0,
      });
      const errors: ServiceError[] = [];
      const flushed: number[] = [];
      const batcher = client.createBatcher({
        maxSize: 20,
        // Timed flushes are what retries a refused batch here; the test waits for the gate's
        // answers, never for a duration.
        flushInterval: 25,
        onFlush: (count) => flushed.push(count),
        onError: (error) => errors.push(error),
      });
      stopList.push(() => batcher.destroy().catch(() => undefined));
      let seq = 0;
      const push = (count: number): void => {
        for (let i = 0; i < count; i++) {
          batcher.push({
            userId: `unauth_user_${seq % USERS}`,
            event: 'batched',
            properties: { seq },
          });
          seq++;
        }
      };

      // The key works: 40 events go through.
      push(40);
      await expect(batcher.flush()).resolves.toBe(40);
      const acceptedBefore = gate.statuses.length;
      expect(gate.statuses).toEqual([202, 202]);

      // The key is revoked: the sandbox refuses 6 requests in a row while more events arrive.
      gate.revoked = true;
      const pushedBeforeRevoke = seq;
      for (const round of range(0, 6)) {
        push(25);
        await gate.answered(acceptedBefore + round + 1);
      }
      const refusals = gate.statuses.slice(acceptedBefore);
      expect(refusals).toEqual(new Array<number>(refusals.length).fill(401));
      // An explicit flush is refused too, with the error itself, and drops nothing.
      const refused = await batcher.flush().catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ServiceError);
      expect(refused).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
      expect((refused as ServiceError).dropped).toBeUndefined();
      // Everything pushed since the revocation waits; the sandbox stored none of it.
      expect(batcher.size).toBe(seq - pushedBeforeRevoke);
      const storedDuringOutage = range(0, USERS).flatMap((user) =>
        storedSeqs(sandbox, `unauth_user_${user}`),
      );
      expect(storedDuringOutage.every((stored) => stored < pushedBeforeRevoke)).toBe(true);

      // The key is restored; a few more events arrive, then everything is sent. (A timed flush
      // forwarded just before the restore may still be refused: flush() then rejects with it.)
      gate.revoked = false;
      push(15);
      let explicitRefusals = 1;
      while (batcher.size > 0) {
        try {
          await batcher.flush();
        } catch (error) {
          expect(error).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
          explicitRefusals++;
        }
      }
      await batcher.destroy();

      const total = seq;
      expect(flushed.reduce((sum, count) => sum + count, 0)).toBe(total);
      for (const user of range(0, USERS)) {
        // Exactly once and in the order pushed.
        expect(storedSeqs(sandbox, `unauth_user_${user}`)).toEqual(
          range(0, total).filter((s) => s % USERS === user),
        );
      }
      // Every refusal was reported once, to onError (timed and size-triggered flushes) or to the
      // flush() caller, as UNAUTHORIZED and without `dropped`; no answer but 202 and 401 was seen.
      const unauthorized = gate.statuses.filter((status) => status === 401).length;
      expect(unauthorized).toBeGreaterThanOrEqual(6);
      expect(errors.length + explicitRefusals).toBe(unauthorized);
      for (const error of errors) {
        expect(error).toBeInstanceOf(ServiceError);
        expect(error).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
        expect(error.dropped).toBeUndefined();
        expect(error.message).not.toContain(sandbox.apiKey);
      }
      expect(new Set(gate.statuses)).toEqual(new Set([202, 401]));
    },
  );
});
