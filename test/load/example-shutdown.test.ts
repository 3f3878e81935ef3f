/**
 * SIGTERM to each example server while it has a backlog: more accepted alerts than processing
 * slots, so that some are still queued (not yet started) when the signal comes. Every one of them
 * must be processed before the process exits 0.
 *
 * The examples' own tests (examples/express/test/server.test.ts, examples/fastify/test/server.test.ts)
 * cover one alert in flight; this one adds the queued backlog behind the busy slots.
 */
import { readFileSync } from 'node:fs';
import { createTestDelivery } from '@churn-risk/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { startExample, type ExampleProcess } from '../support/example-process.js';

const SECRET = 'whsec_load_shutdown_3c9e';
/** More than the examples' receiver concurrency (the default, 10): 10 run, 15 wait in the queue. */
const ALERTS = 25;
const CONCURRENCY = 10;

let server: ExampleProcess | undefined;

afterEach(() => {
  server?.cleanup();
  server = undefined;
});

describe('example servers drain a queued backlog on SIGTERM', () => {
  for (const example of ['express', 'fastify']) {
    it(
      `${example}: ${ALERTS} accepted alerts, ${CONCURRENCY} running and the rest queued, all processed before exit 0`,
      { timeout: 60_000 },
      async () => {
        const started = await startExample(example, { secret: SECRET, workMs: 1000 });
        server = started;
        const out = started;

        const users = Array.from({ length: ALERTS }, (_, i) => `backlog_${i}`);
        const statuses = await Promise.all(
          users.map(async (userId) => {
            const { headers, body } = createTestDelivery({ userId }, { secret: SECRET });
            const response = await fetch(`${started.url}/webhooks/churn-risk`, {
              method: 'POST',
              headers,
              body,
            });
            await response.arrayBuffer();
            return response.status;
          }),
        );
        expect(statuses).toEqual(new Array<number>(ALERTS).fill(202));
        // Every slot is busy: the other alerts are queued, not started, when the signal comes.
        await out.waitForLines(/^processing backlog_/, CONCURRENCY);
        started.child.kill('SIGTERM');
        expect(await started.exited).toBe(0);

        // All alerts were processed, each once, before "drained" and the exit.
        const processed = readFileSync(started.logFile, 'utf8').trim().split('\n').sort();
        expect(processed).toEqual(users.map((user) => `processed ${user}`).sort());
        const signalAt = out.lines.indexOf('SIGTERM: shutting down');
        const drainedAt = out.lines.indexOf('drained');
        expect(signalAt).toBeGreaterThan(-1);
        expect(drainedAt).toBeGreaterThan(signalAt);
        const processedAt = out.lines.flatMap((line, index) =>
          line.startsWith('processed ') ? [index] : [],
        );
        expect(processedAt).toHaveLength(ALERTS);
        // Some work was still waiting when SIGTERM came, and all of it finished before "drained".
        expect(processedAt.filter((index) => index > signalAt).length).toBeGreaterThan(0);
        expect(Math.max(...processedAt)).toBeLessThan(drainedAt);
        const startedAfterSignal = out.lines
          .slice(signalAt)
          .filter((line) => line.startsWith('processing ')).length;
        expect(startedAfterSignal).toBeGreaterThan(0);
      },
    );
  }
});
