/**
 * What `pnpm bench postgres` needs before it starts anything: PostgreSQL's binaries (Debian's
 * PostgreSQL 15 by default, `PG_BIN_DIR` for others) and a Node that loads pg-boss 12 (this one
 * when >= 22.12, else the npm package node@22 of examples/postgres, `demo/node-binary.ts`).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { POSTGRES_BIN_DIR } from '@churn-risk/postgres/testing';
import { pgBossNode } from '../../../examples/postgres/src/demo/node-binary.js';

/** Thrown when the benchmark cannot run here; run.ts prints its message alone. */
export class BenchPrerequisiteError extends Error {
  override readonly name = 'BenchPrerequisiteError';
}

/** The PostgreSQL binaries the benchmark runs: `PG_BIN_DIR`, else Debian's PostgreSQL 15. */
export function postgresBinDir(env: Record<string, string | undefined> = process.env): string {
  const chosen = env.PG_BIN_DIR;
  return chosen === undefined || chosen === '' ? POSTGRES_BIN_DIR : chosen;
}

/** Why PostgreSQL cannot be started from `binDir` (a message naming the fix), or undefined. */
export function missingPostgres(binDir: string, exists = existsSync): string | undefined {
  const missing = ['initdb', 'pg_ctl', 'postgres'].filter((bin) => !exists(join(binDir, bin)));
  if (missing.length === 0) return undefined;
  return (
    `pnpm bench postgres runs a real PostgreSQL, and ${missing.map((bin) => join(binDir, bin)).join(', ')} ` +
    `${missing.length === 1 ? 'is' : 'are'} missing. Install PostgreSQL 15 (Debian, Ubuntu: ` +
    '`apt-get update && apt-get install -y postgresql`, or `pnpm provision` as root), or set ' +
    'PG_BIN_DIR to the folder of its initdb, pg_ctl and postgres.'
  );
}

/** The PostgreSQL binaries and the Node binary of the pg-boss processes; throws what is missing. */
export function benchPrerequisites(): { binDir: string; node: string } {
  const binDir = postgresBinDir();
  const missing = missingPostgres(binDir);
  if (missing !== undefined) throw new BenchPrerequisiteError(missing);
  try {
    return { binDir, node: pgBossNode() };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new BenchPrerequisiteError(`pnpm bench postgres: ${message}`);
  }
}
