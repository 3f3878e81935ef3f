/**
 * @churn-risk/postgres/testing: a real PostgreSQL server (Debian's PostgreSQL 15) for tests and
 * demos: its own cluster in a temporary folder, on a free port of 127.0.0.1, stopped by pid.
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where Debian's PostgreSQL 15 puts `initdb`, `pg_ctl` and `postgres`. */
export const POSTGRES_BIN_DIR = '/usr/lib/postgresql/15/bin';

/** Options of `startPostgres`. */
export interface PostgresServerOptions {
  /** Port; default a free one. */
  port?: number;
  /** The folder of `initdb`, `pg_ctl` and `postgres`. Default `POSTGRES_BIN_DIR`. */
  binDir?: string;
  /**
   * The system user that runs the server when this process is root (PostgreSQL refuses to run as
   * root). Default `postgres`.
   */
  user?: string;
}

/** A running PostgreSQL cluster. */
export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication on 127.0.0.1). */
  url: string;
  port: number;
  /** The postmaster's pid. */
  pid: number;
  /** The cluster's folder (data in `data/`, the log in `log`). */
  dir: string;
  /** Stops the server by its pid (SIGINT: fast shutdown; SIGKILL after 10 s) and waits for it. */
  stop(): Promise<void>;
  /** `pg_ctl stop -m immediate`: a crash, as a power cut would leave it (restart with `start`). */
  crash(): Promise<void>;
  /** Starts the stopped server again on the same port and data. */
  start(): Promise<void>;
  /** Removes the cluster's folder (after `stop`). */
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

function run(command: string, args: string[], asUser: string | undefined): Promise<string> {
  const [file, argv] =
    asUser === undefined ? [command, args] : ['runuser', ['-u', asUser, '--', command, ...args]];
  return new Promise((resolve, reject) => {
    execFile(file, argv, { timeout: 60_000 }, (error, stdout, stderr) => {
      if (error === null) resolve(`${stdout}${stderr}`);
      else
        reject(
          new Error(`${command} ${args.join(' ')} failed: ${error.message}\n${stdout}${stderr}`),
        );
    });
  });
}

function userIds(user: string): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith(`${user}:`));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined) {
    throw new Error(`There is no system user "${user}" to run PostgreSQL as (it refuses root).`);
  }
  return { uid: Number(uid), gid: Number(gid) };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (alive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return true;
}

/**
 * Starts a PostgreSQL cluster of its own (`initdb`, then `pg_ctl start`), listening on 127.0.0.1
 * only, with trust authentication, and resolves once it accepts connections. As root it runs the
 * binaries as the `postgres` user (`runuser`).
 *
 * @example
 * const postgres = await startPostgres();
 * const queue = createPostgresQueue({ connection: postgres.url });
 * // ...
 * await queue.close();
 * await postgres.stop();
 * postgres.cleanup();
 */
export async function startPostgres(options: PostgresServerOptions = {}): Promise<PostgresServer> {
  const binDir = options.binDir ?? POSTGRES_BIN_DIR;
  const initdb = join(binDir, 'initdb');
  if (!existsSync(initdb)) {
    throw new Error(
      `${initdb} is missing; install PostgreSQL 15 with ` +
        '`apt-get update && apt-get install -y postgresql` (or run `pnpm provision` as root).',
    );
  }
  const root = process.getuid?.() === 0;
  const user = root ? (options.user ?? 'postgres') : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'churn-risk-postgres-'));
  const data = join(dir, 'data');
  const log = join(dir, 'log');
  const port = options.port ?? (await freePort());
  let pid = 0;
  const start = async (): Promise<void> => {
    await run(
      join(binDir, 'pg_ctl'),
      [
        'start',
        '-w',
        '-t',
        '60',
        '-D',
        data,
        '-l',
        log,
        '-o',
        `-p ${String(port)} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
      ],
      user,
    );
    pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  };
  const stop = async (): Promise<void> => {
    if (pid === 0 || !alive(pid)) return;
    try {
      process.kill(pid, 'SIGINT'); // fast shutdown
    } catch {
      return;
    }
    if (!(await waitForExit(pid, 10_000))) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
      await waitForExit(pid, 5_000);
    }
  };
  try {
    if (user !== undefined) {
      const { uid, gid } = userIds(user);
      chownSync(dir, uid, gid);
    }
    await run(
      initdb,
      [
        '-D',
        data,
        '-U',
        'postgres',
        '--auth=trust',
        '-E',
        'UTF8',
        '--no-sync',
        '--no-instructions',
      ],
      user,
    );
    await start();
  } catch (error) {
    await stop();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${String(port)}/postgres`,
    port,
    get pid() {
      return pid;
    },
    dir,
    stop,
    async crash() {
      await run(join(binDir, 'pg_ctl'), ['stop', '-m', 'immediate', '-D', data], user);
      await waitForExit(pid, 10_000);
    },
    start,
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
