import { createReceiver, type Receiver } from '@churn-risk/core';
import { createRedisQueue } from '@churn-risk/redis';
import { startRedisServer, type RedisServer } from '@churn-risk/redis/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../packages/sandbox/src/cli/run-cli.js';
import { SECRET, deliveryOf, freshAlert } from './fixtures.js';

/** Runs the CLI in-process; resolves with its exit code and output. */
async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(args, {
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
    },
  });
  return { code, out, err };
}

describe('churn-risk failed list|retry', () => {
  let redis: RedisServer;
  let receiver: Receiver;
  let broken = true;
  const handled: string[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    receiver = createReceiver({
      secret: SECRET,
      queue: createRedisQueue({ connection: redis.url, prefix: 'cli' }),
      retries: { retries: 1, backoffMs: () => 20 },
    });
    receiver.on('churn_risk_alert', (alert) => {
      if (broken) throw new Error(`CRM unavailable for ${alert.userId}`);
      handled.push(alert.userId);
    });
    receiver.onError(() => undefined);
  });
  afterAll(async () => {
    await receiver.close({ timeoutMs: 5000 });
    await redis.stop();
    redis.cleanup();
  });

  it('lists the failed alerts and retries one by id, then all', async () => {
    const alerts = [freshAlert('cli'), freshAlert('cli'), freshAlert('cli')];
    for (const { alert } of alerts)
      expect((await receiver.handle(deliveryOf(alert))).status).toBe(202);
    await receiver.drain({ timeoutMs: 10_000 });

    const base = ['--redis', redis.url, '--prefix', 'cli'];
    const listed = await cli(['failed', 'list', ...base]);
    expect(listed.code).toBe(0);
    for (const { id } of alerts) expect(listed.out).toContain(id);
    expect(listed.out).toMatch(/tries 2/);
    expect(listed.out).toMatch(/CRM unavailable/);

    const json = await cli(['failed', 'list', '--json', '--limit', '1', ...base]);
    const rows = json.out
      .trim()
      .split('\n')
      .map((row) => JSON.parse(row) as { id: string; alertId: string });
    expect(rows).toHaveLength(1);

    broken = false;
    const first = alerts[0]!;
    const retried = await cli(['failed', 'retry', first.id, ...base]);
    expect(retried).toMatchObject({ code: 0 });
    await receiver.drain({ timeoutMs: 10_000 });
    expect(handled).toEqual([first.alert.userId]);

    const all = await cli(['failed', 'retry', '--all', ...base]);
    expect(all.code).toBe(0);
    expect(all.out).toContain('Retrying 2 failed alert(s)');
    await receiver.drain({ timeoutMs: 10_000 });
    expect(handled).toHaveLength(3);
    expect((await cli(['failed', 'list', ...base])).out).toBe('No failed alerts.\n');

    const missing = await cli(['failed', 'retry', 'nope', ...base]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('no failed alert "nope"');
  });

  it('names a bad flag or a missing --redis, with exit code 2', async () => {
    const bad = await cli(['failed', 'list', '--redis', redis.url, '--limitt', '3']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--limitt');
    const noUrl = await cli(['failed', 'list']);
    expect(noUrl.code).toBe(2);
    expect(noUrl.err).toContain('--redis');
    const both = await cli(['failed', 'retry', 'x', '--all', '--redis', redis.url]);
    expect(both.code).toBe(2);
    expect((await cli(['failed', '--help'])).out).toContain('churn-risk failed list');
  });
});
