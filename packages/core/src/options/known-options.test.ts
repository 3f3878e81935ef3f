import { describe, expect, it } from 'vitest';
import { ChurnRiskClient, createEventBatcher, createReceiver } from '@churn-risk/core';
import {
  createDurableQueue,
  createMemoryQueue,
  createMemoryStore,
  createPushQueue,
  refuseUnknownOptions,
} from '@churn-risk/core/store';

// Issue 32: an option a create* function does not know is a TypeError that names it and the
// closest known key, in JavaScript as in TypeScript (the casts below are what a JS caller does).

const SECRET = 'whsec_known_options';
const loose = (options: Record<string, unknown>): never => options as never;

describe('unknown option keys', () => {
  it('createReceiver: onError is named as the method it is', () => {
    expect(() => createReceiver(loose({ secret: SECRET, onError: () => undefined }))).toThrow(
      TypeError,
    );
    expect(() => createReceiver(loose({ secret: SECRET, onError: () => undefined }))).toThrow(
      /"onError".*receiver\.onError\(fn\)/,
    );
    expect(() => createReceiver(loose({ secret: SECRET, tolerence: 60 }))).toThrow(
      /"tolerence" \(did you mean tolerance\?\)/,
    );
    expect(() => createReceiver({ secret: SECRET, tolerance: 60 })).not.toThrow();
  });

  it('queues, stores, the client and the batcher', () => {
    expect(() => createMemoryQueue(loose({ maxQueu: 5 }))).toThrow(/did you mean maxQueue\?/);
    expect(() => createMemoryStore(loose({ clock: Date.now }))).toThrow(/"clock"/);
    expect(() => createDurableQueue(createMemoryStore(), loose({ leaseMS: 10 }))).toThrow(
      /did you mean leaseMs\?/,
    );
    expect(() =>
      createPushQueue(loose({ kind: 'x', send: () => Promise.resolve('accepted'), maxStall: 1 })),
    ).toThrow(/did you mean maxStalls\?/);
    expect(() => new ChurnRiskClient(loose({ apiKey: 'k', retries: 2 }))).toThrow(
      /"retries" \(the number of retries is called maxRetries\)/,
    );
    expect(() =>
      createEventBatcher(() => Promise.resolve(), loose({ flushIntervalMs: 5 })),
    ).toThrow(/did you mean flushInterval\?/);
  });

  it('names no closest key when none is close, and lists the known ones', () => {
    expect(() => refuseUnknownOptions('f', { zzzzzz: 1 }, ['leaseMs'])).toThrow(
      'f does not know the option "zzzzzz". Known options: leaseMs.',
    );
  });
});
