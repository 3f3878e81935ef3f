import { afterEach, describe, expect, it } from 'vitest';
import { startChild, type Child } from '../child-process.js';
import { waitFor } from '../wait-for.js';

/** A throwaway server the web process's queue lives on. */
export interface HealthzServer {
  url: string;
  stop(): Promise<void>;
  cleanup(): void;
}

/** Options of `describeWebHealthz`. */
export interface WebHealthzTest {
  /** The queue's name in `/healthz` answers: `redis`. */
  queue: string;
  /** The server's name in the test's name: `Redis`. */
  title: string;
  /** The example's folder, whose `src/web.ts` runs. */
  exampleRoot: string;
  /** The variable `src/web.ts` reads the queue's URL from: `REDIS_URL`. */
  urlVariable: string;
  /** The Node that runs `src/web.ts`; default this one. */
  node?: () => string;
  startServer(): Promise<HealthzServer>;
  /** How long `/healthz` may take to notice the server is gone. */
  downTimeoutMs: number;
  /** The test's time-out. */
  testTimeoutMs: number;
}

/**
 * The test of a durable example's web process (`src/web.ts`, spawned): `/healthz` answers 200
 * while the queue's server answers, 503 once it is stopped, and SIGTERM exits 0.
 */
export function describeWebHealthz(options: WebHealthzTest): void {
  const { queue, title } = options;
  describe('the web process (src/web.ts, spawned)', () => {
    let server: HealthzServer | undefined;
    let web: Child | undefined;

    afterEach(async () => {
      await web?.stop('SIGKILL');
      await server?.stop();
      server?.cleanup();
    });

    it(
      `answers /healthz 200 while ${title} answers, 503 once it is stopped, and exits 0 on SIGTERM`,
      async () => {
        server = await options.startServer();
        web = startChild(
          'web',
          'src/web.ts',
          {
            [options.urlVariable]: server.url,
            CHURN_RISK_WEBHOOK_SECRET: `whsec_example_${queue}_web`,
            PORT: '0',
          },
          { cwd: options.exampleRoot, node: options.node?.() },
        );
        const url = (await web.waitForLine(/^listening on /)).slice('listening on '.length);
        expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

        const up = await fetch(`${url}/healthz`);
        expect(up.status).toBe(200);
        expect(await up.json()).toEqual({ status: 'ok', queue });

        await server.stop();
        const down = await waitFor(
          async () => {
            const response = await fetch(`${url}/healthz`);
            return response.status === 200 ? undefined : response;
          },
          { timeoutMs: options.downTimeoutMs, what: `/healthz to report ${title} down` },
        );
        expect(down.status).toBe(503);
        expect(await down.json()).toMatchObject({ status: 'unavailable', queue });

        expect(await web.stop('SIGTERM')).toBe(0);
      },
      options.testTimeoutMs,
    );
  });
}
