import { readFileSync } from 'node:fs';
import { createTestDelivery } from '@churn-risk/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { startExample, type ExampleProcess } from './example-process.js';

/**
 * The shutdown test every example server passes: an alert whose handler is still working when
 * SIGTERM arrives is finished before the process exits 0.
 */
export function describeExampleShutdown(name: string): void {
  describe(`${name} example server (spawned)`, () => {
    let server: ExampleProcess | undefined;

    afterEach(() => {
      server?.cleanup();
      server = undefined;
    });

    it('finishes an in-flight alert after SIGTERM, then exits 0', async () => {
      const secret = `whsec_example_${name}_server`;
      server = await startExample(name, { secret, workMs: 1500 });
      expect(server.lines[0]).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/);

      const { headers, body, alert } = createTestDelivery({ userId: 'slow_user' }, { secret });
      const response = await fetch(`${server.url}/webhooks/churn-risk`, {
        method: 'POST',
        headers,
        body,
      });
      expect(response.status).toBe(202);
      await server.waitForLines(/^processing slow_user$/);
      server.child.kill('SIGTERM');

      expect(await server.exited).toBe(0);
      expect(readFileSync(server.logFile, 'utf8')).toBe(`processed ${alert.userId}\n`);
      // The signal came while the handler was still working; the exit waited for it.
      const order = [
        'processing slow_user',
        'SIGTERM: shutting down',
        'processed slow_user',
        'drained',
      ];
      expect(server.lines.filter((line) => order.includes(line))).toEqual(order);
    });
  });
}
