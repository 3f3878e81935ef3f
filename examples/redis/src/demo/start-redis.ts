import { StoreMissingError } from '@churn-risk/example-durable-demo';
import { startRedisServer, type RedisServer } from '@churn-risk/redis/testing';
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/** The command that installs Redis on Debian and Ubuntu. */
export const INSTALL_REDIS = 'apt-get update && apt-get install -y redis-server';

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The `redis-server` binary: `binary` when given (a path or a name), else the one on the PATH. */
function findBinary(binary: string): string | undefined {
  if (isAbsolute(binary) || binary.includes('/')) return isExecutable(binary) ? binary : undefined;
  const dirs = (process.env.PATH ?? '').split(delimiter).filter((dir) => dir !== '');
  return dirs.map((dir) => join(dir, binary)).find(isExecutable);
}

/**
 * Starts a throwaway `redis-server` on a free port of 127.0.0.1 (nothing written to disk). The
 * binary comes from `REDIS_SERVER` when set, else the PATH; without one it throws
 * `StoreMissingError`, whose message names the install command.
 */
export async function startRedis(): Promise<RedisServer> {
  const name = process.env.REDIS_SERVER ?? 'redis-server';
  const binary = findBinary(name);
  if (binary === undefined) {
    throw new StoreMissingError(
      `The demo runs a real Redis, and ${name} was not found. Install it, then run the demo again:\n` +
        `  ${INSTALL_REDIS}`,
    );
  }
  return startRedisServer({ binary });
}
