import { readFileSync } from 'node:fs';
import { ChurnRiskClient } from '@churn-risk/core';
import { createSandbox, type Sandbox } from '@churn-risk/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExample, type ExampleProcess } from '../support/example-process.js';

// The Express example as users run it (its own process), fed by a sandbox with chaos on: every
// acknowledged delivery is sent again byte-identical, and each try waits a random (seeded) delay,
// so the alerts arrive out of order. The example's handler must still process each alert once.

const USERS = Array.from({ length: 12 }, (_, i) => `chaos_user_${String(i).padStart(2, '0')}`);
let sandbox: Sandbox | undefined;
let example: ExampleProcess | undefined;

beforeAll(async () => {
  sandbox = await createSandbox({
    chaos: { duplicateRate: 1, maxExtraDelayMs: 400, seed: 20_251_114 },
  });
  example = await startExample('express', { secret: sandbox.webhookSecret, workMs: 0 });
});

afterAll(async () => {
  example?.cleanup();
  await sandbox?.close();
});

describe('chaos → Express example', () => {
  it('processes each alert exactly once under duplicates and out-of-order arrival', async () => {
    const client = new ChurnRiskClient({ apiKey: sandbox!.apiKey, baseUrl: sandbox!.url });
    const webhook = `${example!.url}/webhooks/churn-risk`;
    for (const userId of USERS) {
      await client.identify(userId, { plan: 'pro', mrr: 99 });
      await client.watch(userId, { threshold: 0.7, webhook, cooldown: '1h' });
    }
    // One request takes every user over its threshold: the sandbox creates the deliveries in
    // this order, at once; the chaos delays decide the order in which they arrive.
    await client.trackBulk(
      USERS.flatMap((userId) => [
        { userId, event: 'payment_failed' },
        { userId, event: 'payment_failed' },
      ]),
    );
    await sandbox!.deliveries.idle(); // every try and every duplicate answered

    const records = sandbox!.deliveries.list();
    expect(records.map((record) => record.alert.userId)).toEqual(USERS);
    for (const record of records) {
      expect(record.state).toBe('delivered');
      // The original and its byte-identical duplicate: both acknowledged with 202.
      expect(record.attempts.map((a) => [a.status, a.duplicate ?? false])).toEqual([
        [202, false],
        [202, true],
      ]);
    }

    // SIGTERM: the example drains its in-flight alerts, then exits 0; its log is then complete.
    example!.child.kill('SIGTERM');
    expect(await example!.exited).toBe(0);
    const processed = readFileSync(example!.logFile, 'utf8').trim().split('\n');
    expect([...processed].sort()).toEqual(USERS.map((userId) => `processed ${userId}`));
    const arrival = example!.lines
      .filter((line) => line.startsWith('processing '))
      .map((line) => line.slice('processing '.length));
    expect([...arrival].sort()).toEqual(USERS);
    expect(arrival).not.toEqual(USERS); // out of order
  });
});
