/**
 * What the Postgres benchmarks need before they start anything: PostgreSQL's binaries (Debian's
 * PostgreSQL 15 by default, `PG_BIN_DIR` for others) and, for the anchors (pg-boss 12,
 * graphile-worker 0.18), the Node 22 binary with bench/node22 installed (`lib/node22.ts`).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { POSTGRES_BIN_DIR } from '@churn-risk/postgres/testing';
import { prepareNode22 } from '../lib/node22.js';
import { BenchPrerequisiteError } from '../lib/prerequisite-error.js';

export { BenchPrerequisiteError };

/** The PostgreSQL binaries the benchmark runs: `PG_BIN_DIR`, else Debian's PostgreSQL 15. */
export function postgresBinDir(env: Record<string, string | undefined> = process.env): string {
  const chosen = env.PG_BIN_DIR;
  return chosen === undefined || chosen === '' ? POSTGRES_BIN_DIR : chosen;
}

/** Why PostgreSQL cannot be started from `binDir` (a message naming the fix), or undefined. */
export function missingPostgres(
  binDir: string,
  exists: (path: string) => boolean = existsSync,
  bench = 'postgres',
): string | undefined {
  const missing = ['initdb', 'pg_ctl', 'postgres'].filter((bin) => !exists(join(binDir, bin)));
  if (missing.length === 0) return undefined;
  return (
    `pnpm bench ${bench} runs a real PostgreSQL, and ${missing.map((bin) => join(binDir, bin)).join(', ')} ` +
    `${missing.length === 1 ? 'is' : 'are'} missing. Install PostgreSQL 15 (Debian, Ubuntu: ` +
    '`apt-get update && apt-get install -y postgresql`, or `pnpm provision` as root), or set ' +
    'PG_BIN_DIR to the folder of its initdb, pg_ctl and postgres.'
  );
}

/** PostgreSQL's binaries, or a `BenchPrerequisiteError` naming the fix. */
export function postgresPrerequisite(bench = 'postgres'): string {
  const binDir = postgresBinDir();
  const missing = missingPostgres(binDir, existsSync, bench);
  if (missing !== undefined) throw new BenchPrerequisiteError(missing);
  return binDir;
}

/**
 * The PostgreSQL binaries and the Node binary of the processes that load pg-boss or
 * graphile-worker (bench/node22 installed on first use); throws what is missing.
 */
export function benchPrerequisites(): { binDir: string; node: string } {
  const binDir = postgresPrerequisite();
  return { binDir, node: prepareNode22() };
}
