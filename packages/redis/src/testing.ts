/**
 * @churn-risk/redis/testing: a real `redis-server` for tests and demos, on a free port of
 * 127.0.0.1, stopped by its pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Options of `startRedisServer`. */
export interface RedisServerOptions {
  /** Port; default a free one. Reuse a stopped server's port to restart it. */
  port?: number;
  /** Turn on AOF persistence (`appendonly yes`, `appendfsync always`). Default off, no RDB either. */
  appendOnly?: boolean;
  /** Data folder (kept across restarts for AOF); default a new temporary folder. */
  dir?: string;
  /** The `redis-server` binary. Default `redis-server` on the PATH. */
  binary?: string;
}

/** A running `redis-server`. */
export interface RedisServer {
  /** `redis://127.0.0.1:<port>` */
  url: string;
  port: number;
  pid: number;
  /** The data folder. */
  dir: string;
  /** Stops the server by its pid (SIGTERM, then SIGKILL after 5 s) and waits for the exit. */
  stop(): Promise<void>;
  /** Sends a signal by pid (e.g. `SIGSTOP` to make it hang, `SIGCONT` to resume). */
  signal(signal: NodeJS.Signals): void;
  /** Removes the data folder when it was made here. */
  cleanup(): void;
}

/** A port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => {
        resolve(port);
      });
    });
  });
}

function waitForReady(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (/Ready to accept connections/.test(output)) {
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => {
      reject(new Error(`redis-server exited (${String(code)}) before it was ready:\n${output}`));
    });
    child.once('error', (error) => {
      reject(
        new Error(
          `redis-server could not start (${error.message}); install it with ` +
            '`apt-get update && apt-get install -y redis-server`.',
        ),
      );
    });
  });
}

/**
 * Starts Debian's `redis-server` on 127.0.0.1 and resolves once it accepts connections. Without
 * `appendOnly` it runs with `--save "" --appendonly no` (nothing written to disk).
 *
 * @example
 * const redis = await startRedisServer();
 * const queue = createRedisQueue({ connection: redis.url });
 * // ...
 * await queue.close();
 * await redis.stop();
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const madeDir = options.dir === undefined;
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'churn-risk-redis-'));
  const port = options.port ?? (await freePort());
  const persistence = options.appendOnly
    ? ['--appendonly', 'yes', '--appendfsync', 'always', '--save', '']
    : ['--save', '', '--appendonly', 'no'];
  const child = spawn(
    options.binary ?? 'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, ...persistence],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      resolve();
    });
  });
  try {
    await waitForReady(child);
  } catch (error) {
    child.kill('SIGKILL');
    if (madeDir) rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const pid = child.pid as number;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid,
    dir,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(pid, 'SIGCONT'); // a stopped (SIGSTOP) server cannot handle SIGTERM
        process.kill(pid, 'SIGTERM');
      } catch {
        return; // already gone
      }
      const timer = setTimeout(() => {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }, 5000);
      await exited;
      clearTimeout(timer);
    },
    signal(signal) {
      process.kill(pid, signal);
    },
    cleanup() {
      if (madeDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
