// The cases every durable back end's failed-set bin passes on a real server, written once: each
// back end's test file starts its server, says what its bin is called and how it seeds the queue,
// and calls `failedCliCases` inside its own `describe`. Test-only (never published), so it uses
// vitest's API directly.
import { spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from '@churn-risk/core';
import type { AlertQueue } from '@churn-risk/core/store';
import { delivery, queuedAlert, SECRET } from '../testing/support.js';
import type { CliIo } from './failed-cli.js';

/** What differs between back ends: the names the bin promises, its server, its queue. */
export interface FailedCliCasesOptions {
  /** The bin's name as its messages and help say it, e.g. `churn-risk-redis`. */
  bin: string;
  /** The bin's source file, run as its own process (from source, with tsx). */
  binPath: string;
  /** The package's `runFailedCli`, run in-process. */
  run: (args: readonly string[], io: CliIo) => Promise<number>;
  /** The store as messages name it: `Redis`, `Postgres`. */
  store: string;
  /** The URL flag without dashes (`redis`, `database`) and the variable it defaults to. */
  urlFlag: string;
  urlEnv: string;
  /** The scope flag without dashes (`prefix`, `schema`), and a misspelling one letter off. */
  scopeFlag: string;
  misspeltScopeFlag: string;
  /** The running server's URL (known once the file's `beforeAll` has started it). */
  url(): string;
  /** A queue on the server at `url`, scoped by `scope`, that the receiver seeding the cases uses. */
  queue(url: string, scope: string): AlertQueue;
  /** A URL with `password` for a server on 127.0.0.1 at `port`, and how messages name it. */
  urlWithPassword(port: number, password: string): string;
  shownAs(port: number): string;
}

/** What one in-process run of the CLI did: its exit code and output. */
export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/** A bin run as its own process; `killed` when it had not exited on its own within 60 s. */
interface BinRun {
  code: number | null;
  out: string;
  err: string;
  killed: boolean;
}

const SCOPE = 'cli';
const PASSWORD = 's3cret-pass';
/** The other back ends' URLs: each is a usage error for a bin that does not take its scheme. */
const FOREIGN_URLS = ['redis://x', 'postgres://x', 'http://x'];

/** Runs a bin's `runFailedCli` in-process with `args`; resolves with its exit code and output. */
export async function runCli(
  run: FailedCliCasesOptions['run'],
  args: readonly string[],
): Promise<CliRun> {
  let out = '';
  let err = '';
  const code = await run(args, {
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
    },
  });
  return { code, out, err };
}

/** Runs the bin from source; resolves with its exit code and output. */
function runBin(
  binPath: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<BinRun> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@churn-risk/source', '--import', 'tsx', binPath, ...args],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    // A hang is a failure: the bin must exit on its own. (Start-up from source on a loaded
    // machine takes seconds, so the bound here is generous; the in-process case checks 10 s.)
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err, killed });
    });
  });
}

/**
 * Registers the failed-set CLI's cases for one back end: list, `--json`, retry by id and `--all`,
 * usage errors with exit code 2, the bin from source with the URL in its variable, and a store
 * that hangs or does not listen (exit 1 within bounds, one line, never the password). Call it
 * inside a `describe` whose `beforeAll` starts the server `options.url()` names.
 */
export function failedCliCases(options: FailedCliCasesOptions): void {
  const { bin, store, urlFlag, urlEnv, scopeFlag } = options;
  const help = `\nRun "${bin} --help" for usage.\n`;

  const cli = (args: string[]): Promise<CliRun> => runCli(options.run, args);

  describe('failed list|retry', () => {
    let receiver: Receiver | undefined;
    let broken = true;
    const handled: string[] = [];

    beforeAll(() => {
      receiver = createReceiver({
        secret: SECRET,
        queue: options.queue(options.url(), SCOPE),
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
    });

    it('lists the failed alerts under a header row and retries one by id, then all', async () => {
      const seeded = receiver;
      if (seeded === undefined) throw new Error('the receiver was not made');
      const first = queuedAlert();
      const alerts = [first, queuedAlert(), queuedAlert()];
      for (const alert of alerts) expect((await seeded.handle(delivery(alert))).status).toBe(202);
      await seeded.drain({ timeoutMs: 10_000 });

      const base = [`--${urlFlag}`, options.url(), `--${scopeFlag}`, SCOPE];
      const listed = await cli(['failed', 'list', ...base]);
      expect(listed.code).toBe(0);
      const [header, ...rows] = listed.out.trimEnd().split('\n');
      expect(header?.split(/\s{2,}/)).toEqual(['ID', 'ALERT', 'TRIES', 'FAILED AT', 'ERROR']);
      expect(rows).toHaveLength(3);
      for (const alert of alerts) expect(listed.out).toContain(alert.id);
      expect(rows[0]).toMatch(/\s2\s+\d{4}-\d\d-\d\dT.*Handler #0 failed: Error: CRM unavailable/);

      const json = await cli(['failed', 'list', '--json', '--limit', '1', ...base]);
      const lines = json.out.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0] ?? '')).toMatchObject({ tries: 2 });

      broken = false;
      expect((await cli(['failed', 'retry', first.id, ...base])).code).toBe(0);
      await seeded.drain({ timeoutMs: 10_000 });
      expect(handled).toEqual([first.alert.userId]);

      const all = await cli(['failed', 'retry', '--all', ...base]);
      expect(all).toMatchObject({ code: 0, out: 'Retrying 2 failed alert(s).\n' });
      await seeded.drain({ timeoutMs: 10_000 });
      expect(handled).toHaveLength(3);
      expect((await cli(['failed', 'list', ...base])).out).toBe('No failed alerts.\n');

      const missing = await cli(['failed', 'retry', 'nope', ...base]);
      expect(missing.code).toBe(1);
      expect(missing.err).toContain('no failed alert "nope"');
    });

    it(`the bin (from source) runs, with the URL in ${urlEnv}, and says when there are no failed alerts`, async () => {
      // After the case above: the scope exists and its failed set is empty again.
      const result = await runBin(options.binPath, ['failed', 'list', `--${scopeFlag}`, SCOPE], {
        [urlEnv]: options.url(),
      });
      expect(result.err).toBe('');
      expect(result.code).toBe(0);
      expect(result.out).toBe('No failed alerts.\n');
    }, 90_000);

    it(`names a bad flag or a missing --${urlFlag}, with exit code 2`, async () => {
      const url = options.url();
      const bad = await cli(['failed', 'list', `--${urlFlag}`, url, '--limt', '3']);
      expect(bad).toEqual({
        code: 2,
        out: '',
        err: `${bin}: unknown option --limt; did you mean --limit?${help}`,
      });
      const misspelt = `--${options.misspeltScopeFlag}`;
      expect((await cli(['failed', 'list', misspelt, 'x', `--${urlFlag}`, url])).err).toBe(
        `${bin}: unknown option ${misspelt}; did you mean --${scopeFlag}?${help}`,
      );
      const saved = process.env[urlEnv];
      Reflect.deleteProperty(process.env, urlEnv);
      try {
        expect(await cli(['failed', 'list'])).toEqual({
          code: 2,
          out: '',
          err: `${bin}: --${urlFlag} <url> is required (or set $${urlEnv}).${help}`,
        });
      } finally {
        if (saved !== undefined) process.env[urlEnv] = saved;
      }
      const scheme = url.slice(0, url.indexOf(':'));
      for (const foreign of FOREIGN_URLS.filter((other) => !other.startsWith(`${scheme}:`))) {
        expect((await cli(['failed', 'list', `--${urlFlag}`, foreign])).code).toBe(2);
      }
      expect((await cli(['failed', 'retry', 'x', '--all', `--${urlFlag}`, url])).code).toBe(2);
      expect((await cli(['--help'])).out).toContain(`${bin} failed list`);
    });
  });

  describe(`when ${store} cannot be reached`, () => {
    let silent: Server;
    let silentPort = 0;
    const sockets: Socket[] = [];

    beforeAll(async () => {
      // Accepts connections and never answers: a store that hangs (behind a firewall, stopped).
      silent = createServer((socket) => sockets.push(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const address = silent.address();
      silentPort = typeof address === 'object' && address !== null ? address.port : 0;
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => {
        silent.close(() => {
          resolve();
        });
      });
    });

    it('exits 1 within 10 s with one line naming the place (never the password), when it hangs', async () => {
      const url = options.urlWithPassword(silentPort, PASSWORD);
      const started = Date.now();
      const result = await cli(['failed', 'list', `--${urlFlag}`, url]);
      const elapsed = Date.now() - started;
      expect(result.code).toBe(1);
      expect(result.err.trimEnd().split('\n')).toHaveLength(1);
      expect(result.err).toContain(`cannot reach ${store} at ${options.shownAs(silentPort)}`);
      expect(result.err + result.out).not.toContain(PASSWORD);
      expect(elapsed).toBeLessThan(10_000); // an unreachable store: non-zero within 10 s
    }, 30_000);

    it('the bin exits non-zero on its own when nothing listens, naming the place', async () => {
      const started = Date.now();
      const url = options.urlWithPassword(1, PASSWORD);
      const result = await runBin(options.binPath, ['failed', 'list', `--${urlFlag}`, url]);
      expect(result.killed).toBe(false);
      expect(result.code).toBe(1);
      expect(result.err.trimEnd().split('\n')).toEqual([
        expect.stringContaining(`cannot reach ${store} at ${options.shownAs(1)}`),
      ]);
      expect(result.err + result.out).not.toContain(PASSWORD);
      expect(Date.now() - started).toBeLessThan(60_000);
    }, 90_000);
  });
}
