import { StoreMissingError } from '@churn-risk/example-durable-demo';
import {
  POSTGRES_BIN_DIR,
  startPostgres as startCluster,
  type PostgresServer,
} from '@churn-risk/postgres/testing';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The command that installs PostgreSQL on Debian and Ubuntu. */
export const INSTALL_POSTGRES = 'apt-get update && apt-get install -y postgresql';

/**
 * Starts a throwaway PostgreSQL cluster of its own (`initdb` in a temporary folder, a free port of
 * 127.0.0.1, trust authentication; as root it runs as the `postgres` user). The binaries come from
 * `PG_BIN_DIR` when set, else Debian's PostgreSQL 15 (`/usr/lib/postgresql/15/bin`); without them
 * it throws `StoreMissingError`, whose message names the install command.
 */
export async function startPostgres(): Promise<PostgresServer> {
  const binDir = process.env.PG_BIN_DIR ?? POSTGRES_BIN_DIR;
  if (!existsSync(join(binDir, 'initdb')) || !existsSync(join(binDir, 'pg_ctl'))) {
    throw new StoreMissingError(
      `The demo runs a real PostgreSQL, and ${join(binDir, 'initdb')} was not found. Install ` +
        `it, then run the demo again:\n  ${INSTALL_POSTGRES}`,
    );
  }
  return startCluster({ binDir });
}
