import { startPostgres, type PostgresServer } from '@churn-risk/postgres/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { startChild, type Child } from '../src/demo/child-process.js';
import { waitFor } from '../src/demo/wait-for.js';

// src/web.ts loads pg-boss 12 (Node >= 22.12): startChild runs it under this Node when it is 22.12
// or later, else under the example's own node@22 (src/demo/node-binary.ts).
describe('the web process (src/web.ts, spawned)', () => {
  let postgres: PostgresServer | undefined;
  let web: Child | undefined;

  afterEach(async () => {
    await web?.stop('SIGKILL');
    await postgres?.stop();
    postgres?.cleanup();
  });

  it('answers /healthz 200 while Postgres answers, 503 once it is stopped, and exits 0 on SIGTERM', async () => {
    postgres = await startPostgres();
    web = startChild('web', 'web.ts', {
      DATABASE_URL: postgres.url,
      CHURN_RISK_WEBHOOK_SECRET: 'whsec_example_postgres_web',
      PORT: '0',
    });
    const url = (await web.waitForLine(/^listening on /)).slice('listening on '.length);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const up = await fetch(`${url}/healthz`);
    expect(up.status).toBe(200);
    expect(await up.json()).toEqual({ status: 'ok', queue: 'postgres' });

    await postgres.stop();
    const down = await waitFor(
      async () => {
        const response = await fetch(`${url}/healthz`);
        return response.status === 200 ? undefined : response;
      },
      { timeoutMs: 15_000, what: '/healthz to report Postgres down' },
    );
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ status: 'unavailable', queue: 'postgres' });

    expect(await web.stop('SIGTERM')).toBe(0);
  }, 60_000);
});
