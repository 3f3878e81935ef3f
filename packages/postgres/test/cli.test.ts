import { createReceiver, type Receiver } from '@churn-risk/core';
import { spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFailedCli } from '../src/cli/failed-cli.js';
import { createPostgresQueue } from '../src/index.js';
import { startPostgres, type PostgresServer } from '../src/testing.js';
import { deliveryOf, makeAlert, requirePassword, SECRET, sql, urlAs } from './helpers.js';

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

/** Runs the bin as its own process (from source); resolves with its exit code and output. */
function runBin(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@churn-risk/source', '--import', 'tsx', BIN, ...args],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000); // a hang fails below
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

const alertId = (alert: Record<string, unknown>): string =>
  `${String(alert.userId)}:${String(alert.triggeredAt)}`;

describe('churn-risk-postgres failed list|retry', () => {
  let postgres: PostgresServer;
  let receiver: Receiver;
  let broken = true;
  const handled: string[] = [];

  beforeAll(async () => {
    postgres = await startPostgres();
    receiver = createReceiver({
      secret: SECRET,
      queue: createPostgresQueue({ connection: postgres.url, schema: 'cli' }),
      retries: { retries: 1, backoffMs: () => 20 },
    });
    receiver.on('churn_risk_alert', (alert) => {
      if (broken) throw new Error(`CRM unavailable for ${alert.userId}`);
      handled.push(alert.userId);
    });
    receiver.onError(() => undefined);
  });
  afterAll(async () => {
    await receiver?.close({ timeoutMs: 5000 });
    await postgres?.stop();
    postgres?.cleanup();
  });

  it('lists the failed alerts under a header row and retries one by id, then all', async () => {
    const alerts = [makeAlert(), makeAlert(), makeAlert()];
    for (const alert of alerts) expect((await receiver.handle(deliveryOf(alert))).status).toBe(202);
    await receiver.drain({ timeoutMs: 10_000 });

    const base = ['--database', postgres.url, '--schema', 'cli'];
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

  it('the bin (from source) runs, with the URL in DATABASE_URL, and says when there are no failed alerts', async () => {
    const result = await runBin(['failed', 'list', '--schema', 'cli'], {
      DATABASE_URL: postgres.url,
    });
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    expect(result.out).toBe('No failed alerts.\n');
  }, 90_000);

  it('creates and migrates nothing: a schema without the tables is an error naming it and --schema', async () => {
    for (const [args, schema] of [
      [['--schema', 'nothing_here'], 'nothing_here'],
      [[], 'churn_risk'],
    ] as const) {
      const result = await cli(['failed', 'list', '--database', postgres.url, ...args]);
      expect(result.code).toBe(1);
      expect(result.out).toBe('');
      expect(result.err.trimEnd().split('\n')).toHaveLength(1);
      expect(result.err).toContain(`"${schema}"`);
      expect(result.err).toContain('--schema');
    }
    await sql(postgres.url, 'CREATE SCHEMA empty_one');
    const empty = await cli([
      'failed',
      'retry',
      '--all',
      '--database',
      postgres.url,
      '--schema',
      'empty_one',
    ]);
    expect(empty.code).toBe(1);
    expect(empty.err).toContain('"empty_one" holds no @churn-risk/postgres tables');
    const { rows } = await sql(
      postgres.url,
      `SELECT nspname FROM pg_namespace WHERE nspname IN ('nothing_here', 'churn_risk')
       UNION ALL SELECT table_name FROM information_schema.tables WHERE table_schema = 'empty_one'`,
    );
    expect(rows).toEqual([]);
  });

  it('a wrong password: one line naming the host, never the user or the password', async () => {
    await sql(postgres.url, "CREATE ROLE churner LOGIN PASSWORD 'right-pass'");
    await requirePassword(postgres, 'churner');
    const url = urlAs(postgres, 'churner', 'wrong-pass', 'postgres');
    const result = await cli(['failed', 'list', '--database', url, '--schema', 'cli']);
    expect(result.code).toBe(1);
    expect(result.err.trimEnd().split('\n')).toEqual([
      `churn-risk-postgres: cannot reach Postgres at 127.0.0.1:${String(postgres.port)}/postgres ` +
        'within 5 s (password authentication failed: the user name or the password is wrong).',
    ]);
    expect(result.err).not.toContain('churner');
    expect(result.err).not.toContain('wrong-pass');
  });

  it('names a bad flag or a missing --database, with exit code 2', async () => {
    const help = `\nRun "churn-risk-postgres --help" for usage.\n`;
    const bad = await cli(['failed', 'list', '--database', postgres.url, '--limt', '3']);
    expect(bad).toEqual({
      code: 2,
      out: '',
      err: `churn-risk-postgres: unknown option --limt; did you mean --limit?${help}`,
    });
    expect((await cli(['failed', 'list', '--shema', 'x', '--database', postgres.url])).err).toBe(
      `churn-risk-postgres: unknown option --shema; did you mean --schema?${help}`,
    );
    const saved = process.env.DATABASE_URL;
    delete process.env.DATABASE_URL;
    try {
      expect(await cli(['failed', 'list'])).toEqual({
        code: 2,
        out: '',
        err: `churn-risk-postgres: --database <url> is required (or set $DATABASE_URL).${help}`,
      });
    } finally {
      if (saved !== undefined) process.env.DATABASE_URL = saved;
    }
    expect((await cli(['failed', 'list', '--database', 'redis://x'])).code).toBe(2);
    expect((await cli(['failed', 'retry', 'x', '--all', '--database', postgres.url])).code).toBe(2);
    expect((await cli(['--help'])).out).toContain('churn-risk-postgres failed list');
  });
});

describe('churn-risk-postgres when the database cannot be reached', () => {
  let silent: Server;
  let silentPort = 0;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    // Accepts connections and never answers: a database that hangs (behind a firewall, stopped).
    silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    silentPort = typeof address === 'object' && address !== null ? address.port : 0;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it('exits 1 within 10 s with one line naming the host (never the password), when it hangs', async () => {
    const url = `postgres://app:s3cret-pass@127.0.0.1:${String(silentPort)}/alerts`;
    const started = Date.now();
    const result = await cli(['failed', 'list', '--database', url]);
    const elapsed = Date.now() - started;
    expect(result.code).toBe(1);
    expect(result.err.trimEnd().split('\n')).toHaveLength(1);
    expect(result.err).toContain(`cannot reach Postgres at 127.0.0.1:${String(silentPort)}/alerts`);
    expect(result.err + result.out).not.toContain('s3cret-pass');
    expect(elapsed).toBeLessThan(10_000); // an unreachable database: non-zero within 10 s
  }, 30_000);

  it('the bin exits non-zero on its own when nothing listens, naming the host', async () => {
    const started = Date.now();
    const result = await runBin([
      'failed',
      'list',
      '--database',
      'postgres://app:s3cret-pass@127.0.0.1:1/alerts',
    ]);
    expect(result.code).toBe(1);
    expect(result.err.trimEnd().split('\n')).toEqual([
      expect.stringContaining('cannot reach Postgres at 127.0.0.1:1/alerts'),
    ]);
    expect(result.err + result.out).not.toContain('s3cret-pass');
    expect(Date.now() - started).toBeLessThan(60_000);
  }, 90_000);
});
