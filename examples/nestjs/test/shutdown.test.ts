import { readFileSync } from 'node:fs';
import { createTestDelivery } from '@churn-risk/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { startNestExample, type NestProcess } from './nest-process.js';

const SECRET = 'whsec_example_nestjs_shutdown';

describe('NestJS example (spawned): graceful shutdown', () => {
  let app: NestProcess | undefined;

  afterEach(() => {
    app?.cleanup();
    app = undefined;
  });

  it('finishes an in-flight alert after SIGTERM, refuses new ones with 503 CLOSED, then exits 0', async () => {
    // The handler works 4 s: SIGTERM arrives while it runs.
    app = await startNestExample({ secret: SECRET, workMs: 4000 });
    const first = createTestDelivery({ userId: 'slow_user' }, { secret: SECRET });
    const accepted = await fetch(`${app.url}/webhooks/churn-risk`, {
      method: 'POST',
      headers: first.headers,
      body: first.body,
    });
    expect(accepted.status).toBe(202);
    await app.waitForLines(/^processing slow_user$/);

    app.child.kill('SIGTERM');
    await app.waitForLines(/^SIGTERM: shutting down$/);
    // The receiver is closed, the server still open while the handler works: the service is told
    // to retry later, and the readiness probe fails.
    const late = createTestDelivery({ userId: 'late_user' }, { secret: SECRET });
    const refused = await fetch(`${app.url}/webhooks/churn-risk`, {
      method: 'POST',
      headers: { ...late.headers, connection: 'close' },
      body: late.body,
    });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('CLOSED');

    expect(await app.exited).toBe(0);
    expect(readFileSync(app.logFile, 'utf8')).toBe('processed slow_user\n');
    const order = [
      'processing slow_user',
      'SIGTERM: shutting down',
      'processed slow_user',
      'drained',
    ];
    expect(app.lines.filter((line) => order.includes(line))).toEqual(order);
  });
});
