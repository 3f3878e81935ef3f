import { createReceiver, type Receiver } from '@churn-risk/core';
import { spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFailedCli } from '../src/cli/failed-cli.js';
import { createRedisQueue } from '../src/index.js';
import { startRedisServer, type RedisServer } from '../src/testing.js';
import { deliveryOf, makeAlert, SECRET } from './helpers.js';

const BIN = fileURLToPath(new URL('../src/cli/bin.ts', import.meta.url));

/** Runs the CLI in-process; resolves with its exit code and output. */
async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runFailedCli(args, {
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
    },
  });
  return { code, out, err };
}

/** Runs the bin as its own process (from source); resolves with its exit code and stderr. */
function runBin(args: string[]): Promise<{ code: number | null; err: string; killed: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@churn-risk/source', '--import', 'tsx', BIN, ...args],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    // A hang is a failure: the bin must exit on its own. (Start-up from source on a loaded
    // machine takes seconds, so the bound here is generous; the in-process test checks 10 s.)
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, err, killed });
    });
  });
}

const alertId = (alert: Record<string, unknown>): string =>
  `${String(alert.userId)}:${String(alert.triggeredAt)}`;

describe('churn-risk-redis failed list|retry', () => {
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

  it('lists the failed alerts under a header row and retries one by id, then all', async () => {
    const alerts = [makeAlert(), makeAlert(), makeAlert()];
    for (const alert of alerts) expect((await receiver.handle(deliveryOf(alert))).status).toBe(202);
    await receiver.drain({ timeoutMs: 10_000 });

    const base = ['--redis', redis.url, '--prefix', 'cli'];
    const listed = await cli(['failed', 'list', ...base]);
    expect(listed.code).toBe(0);
    const [header, ...rows] = listed.out.trimEnd().split('\n');
    expect(header?.split(/\s{2,}/)).toEqual(['ID', 'ALERT', 'TRIES', 'FAILED AT', 'ERROR']);
    expect(rows).toHaveLength(3);
    for (const alert of alerts) expect(listed.out).toContain(alertId(alert));
    expect(rows[0]).toMatch(/\s2\s+\d{4}-\d\d-\d\dT.*Handler #0 failed: Error: CRM unavailable/);

    const json = await cli(['failed', 'list', '--json', '--limit', '1', ...base]);
    const lines = json.out.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ tries: 2 });

    broken = false;
    const first = alerts[0] as Record<string, unknown>;
    expect((await cli(['failed', 'retry', alertId(first), ...base])).code).toBe(0);
    await receiver.drain({ timeoutMs: 10_000 });
    expect(handled).toEqual([first.userId]);

    const all = await cli(['failed', 'retry', '--all', ...base]);
    expect(all).toMatchObject({ code: 0, out: 'Retrying 2 failed alert(s).\n' });
    await receiver.drain({ timeoutMs: 10_000 });
    expect(handled).toHaveLength(3);
    expect((await cli(['failed', 'list', ...base])).out).toBe('No failed alerts.\n');

    const missing = await cli(['failed', 'retry', 'nope', ...base]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('no failed alert "nope"');
  });

  it('names a bad flag or a missing --redis, with exit code 2', async () => {
    const help = `\nRun "churn-risk-redis --help" for usage.\n`;
    const bad = await cli(['failed', 'list', '--redis', redis.url, '--limt', '3']);
    expect(bad).toEqual({
      code: 2,
      out: '',
      err: `churn-risk-redis: unknown option --limt; did you mean --limit?${help}`,
    });
    expect((await cli(['failed', 'list', '--prefx', 'x', '--redis', redis.url])).err).toBe(
      `churn-risk-redis: unknown option --prefx; did you mean --prefix?${help}`,
    );
    const saved = process.env.REDIS_URL;
    delete process.env.REDIS_URL;
    try {
      expect(await cli(['failed', 'list'])).toEqual({
        code: 2,
        out: '',
        err: `churn-risk-redis: --redis <url> is required (or set $REDIS_URL).${help}`,
      });
    } finally {
      if (saved !== undefined) process.env.REDIS_URL = saved;
    }
    expect((await cli(['failed', 'retry', 'x', '--all', '--redis', redis.url])).code).toBe(2);
    expect((await cli(['--help'])).out).toContain('churn-risk-redis failed list');
  });
});

describe('churn-risk-redis when Redis cannot be reached', () => {
  let silent: Server;
  let silentPort = 0;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    // Accepts connections and never answers: a Redis that hangs (behind a firewall, stopped).
    silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    silentPort = typeof address === 'object' && address !== null ? address.port : 0;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it('exits 1 within 10 s with one line naming the URL (never its password), when Redis hangs', async () => {
    const url = `redis://:s3cret-pass@127.0.0.1:${silentPort}`;
    const started = Date.now();
    const result = await cli(['failed', 'list', '--redis', url]);
    const elapsed = Date.now() - started;
    expect(result.code).toBe(1);
    expect(result.err.trimEnd().split('\n')).toHaveLength(1);
    expect(result.err).toContain(`redis://:***@127.0.0.1:${silentPort}`);
    expect(result.err).not.toContain('s3cret-pass');
    expect(elapsed).toBeLessThan(10_000); // an unreachable Redis: non-zero within 10 s
  }, 30_000);

  it('the bin exits non-zero on its own when nothing listens, naming the URL', async () => {
    const result = await runBin(['failed', 'list', '--redis', 'redis://127.0.0.1:1']);
    expect(result.killed).toBe(false);
    expect(result.code).toBe(1);
    expect(result.err.trimEnd().split('\n')).toEqual([
      expect.stringContaining('cannot reach Redis at redis://127.0.0.1:1'),
    ]);
  }, 90_000);
});
