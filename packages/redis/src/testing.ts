/**
 * @churn-risk/redis/testing: a real `redis-server` (or a Redis Cluster of them) for tests and
 * demos, on free ports of 127.0.0.1, stopped by pid.
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
  /** More `redis-server` arguments, e.g. `['--cluster-enabled', 'yes']`. */
  extraArgs?: string[];
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
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      ...persistence,
      ...(options.extraArgs ?? []),
    ],
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

/** Options of `startRedisCluster`. */
export interface RedisClusterOptions {
  /** Master nodes (no replicas). Default 3, the smallest cluster `redis-cli` creates. */
  masters?: number;
  /** The `redis-server` binary. Default `redis-server` on the PATH. */
  binary?: string;
  /** The `redis-cli` binary. Default `redis-cli` on the PATH. */
  cli?: string;
}

/** A running Redis Cluster of masters on 127.0.0.1. */
export interface RedisCluster {
  /** The nodes, for `new Cluster(nodes)`: `{ host: '127.0.0.1', port }`. */
  nodes: { host: string; port: number }[];
  /** The servers' pids. */
  pids: number[];
  /** Stops every node by its pid and removes the data folders. */
  stop(): Promise<void>;
}

/** True when `port` can be listened on now. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => {
      resolve(false);
    });
    server.listen(port, '127.0.0.1', () => {
      server.close(() => {
        resolve(true);
      });
    });
  });
}

/** A free port whose cluster bus port (port + 10000) is free too. */
async function freeClusterPort(): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const port = await freePort();
    if (port + 10_000 <= 65_535 && (await portIsFree(port + 10_000))) return port;
    const low = 20_000 + Math.floor(Math.random() * 30_000);
    if ((await portIsFree(low)) && (await portIsFree(low + 10_000))) return low;
  }
  throw new Error('No free port pair (port, port + 10000) was found for a cluster node.');
}

function run(binary: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolve(output);
      else reject(new Error(`${binary} ${args.join(' ')} exited ${String(code)}:\n${output}`));
    });
  });
}

/**
 * Starts a Redis Cluster of `masters` Debian `redis-server`s (`--cluster-enabled yes`, no
 * persistence) on free ports of 127.0.0.1, joins them with `redis-cli --cluster create`, and
 * resolves once every slot is served.
 *
 * @example
 * const cluster = await startRedisCluster();
 * const connection = new Cluster(cluster.nodes);
 * const queue = createRedisQueue({ connection, prefix: '{churn-risk}' });
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const masters = options.masters ?? 3;
  const servers: RedisServer[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(servers.map((server) => server.stop()));
    for (const server of servers) server.cleanup();
  };
  try {
    for (let i = 0; i < masters; i++) {
      servers.push(
        await startRedisServer({
          ...(options.binary === undefined ? {} : { binary: options.binary }),
          port: await freeClusterPort(),
          extraArgs: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'],
        }),
      );
    }
    const cli = options.cli ?? 'redis-cli';
    const addresses = servers.map((server) => `127.0.0.1:${server.port}`);
    await run(cli, [
      '--cluster',
      'create',
      ...addresses,
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    const first = servers[0] as RedisServer;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const info = await run(cli, ['-p', String(first.port), 'cluster', 'info']);
      if (/cluster_state:ok/.test(info) && /cluster_slots_ok:16384/.test(info)) break;
      if (Date.now() > deadline) throw new Error(`The cluster did not become ready:\n${info}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    nodes: servers.map((server) => ({ host: '127.0.0.1', port: server.port })),
    pids: servers.map((server) => server.pid),
    stop,
  };
}
