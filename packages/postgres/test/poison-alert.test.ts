import { createReceiver } from '@churn-risk/core';
import { type AlertRecord } from '@churn-risk/core/store';
import { describe, expect, it } from 'vitest';
import { createPostgresQueue, createPostgresStore } from '../src/index.js';
import { deliveryOf, makeAlert, SECRET, until, usePostgres } from './helpers.js';

// An alert whose worker died mid-alert more than maxStalls times goes to the
// failed set, with an error that says it stalled, and onError is called once. Each "death" here is
// a take whose lease is left to expire (what a SIGKILLed worker leaves behind), on a real Postgres.

const postgres = usePostgres();

describe('a poison alert (real Postgres)', () => {
  it('is failed after maxStalls stalls, onError once, and other alerts keep flowing', async () => {
    const schema = 'poison';
    const maxStalls = 2;
    const leaseMs = 200;
    // The process that dies: it takes the alert and never writes again.
    const dying = createPostgresStore({ connection: postgres.url, schema, pollIntervalMs: 50 });
    postgres.open.queues.push(createPostgresQueue({ connection: postgres.url, schema }));
    const poison = makeAlert();
    const web = createReceiver({
      secret: SECRET,
      queue: createPostgresQueue({ connection: postgres.url, schema }),
      consume: false,
    });
    postgres.open.receivers.push(web);
    expect((await web.handle(deliveryOf(poison))).status).toBe(202);

    for (let death = 0; death <= maxStalls; death++) {
      let taken: AlertRecord<'taken'> | undefined;
      const token = `dying-${String(death)}`;
      await until(
        async () => {
          await dying.reclaimExpired();
          taken = await dying.take({ token, leaseMs });
          return taken !== undefined;
        },
        `take ${String(death)}`,
      );
      // What core does at a takeover before the try: it counts the stall and writes the count.
      expect([taken?.stalls, taken?.lapsed]).toEqual([Math.max(0, death - 1), death > 0]);
      if (taken?.lapsed === true) {
        expect(await dying.extend(taken.jobId, token, leaseMs, taken.stalls + 1)).toBe(true);
      }
      await new Promise((resolve) => setTimeout(resolve, leaseMs + 50)); // the worker "dies"
    }
    await dying.close();

    // A healthy worker: it reclaims the alert, sees stalls > maxStalls and fails it unrun.
    const queue = createPostgresQueue({
      connection: postgres.url,
      schema,
      leaseMs,
      maxStalls,
      reclaimIntervalMs: 50,
    });
    const worker = createReceiver({ secret: SECRET, queue });
    postgres.open.receivers.push(worker);
    const ran: string[] = [];
    const errors: string[] = [];
    worker.on('churn_risk_alert', (alert) => void ran.push(alert.userId));
    worker.onError(
      (error) => void errors.push(error instanceof Error ? error.message : String(error)),
    );
    const healthy = makeAlert();
    expect((await web.handle(deliveryOf(healthy))).status).toBe(202);
    // `onError` is called once the store took the failed verdict, so after `counts()` may show it.
    await until(
      async () => (await queue.counts()).failed === 1 && ran.length === 1 && errors.length > 0,
      'the verdicts and the report',
    );
    expect(ran).toEqual([healthy.userId]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/poison/i);
    const [failed] = await queue.failed();
    expect(failed?.id).toBe(`${String(poison.userId)}:${String(poison.triggeredAt)}`);
    expect(failed?.error).toMatch(/poison/i);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(errors).toHaveLength(1); // once
  });
});
