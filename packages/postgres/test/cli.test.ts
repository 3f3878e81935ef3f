import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  failedCliCases,
  runCli,
  type CliRun,
} from '../../core/src/node/failed-cli-cases.test-util.js';
import { runFailedCli } from '../src/cli/failed-cli.js';
import { createPostgresQueue } from '../src/index.js';
import { startPostgres, type PostgresServer } from '../src/testing.js';
import { requirePassword, sql, urlAs } from './helpers.js';

const cli = (args: string[]): Promise<CliRun> => runCli(runFailedCli, args);

// The failed-set CLI's shared cases (core's failed-cli-cases), then what only Postgres has: a
// schema and a password, on a real PostgreSQL.
describe('churn-risk-postgres', () => {
  let postgres: PostgresServer | undefined;

  beforeAll(async () => {
    postgres = await startPostgres();
  });
  afterAll(async () => {
    await postgres?.stop();
    postgres?.cleanup();
  });

  failedCliCases({
    bin: 'churn-risk-postgres',
    binPath: fileURLToPath(new URL('../src/cli/bin.ts', import.meta.url)),
    run: runFailedCli,
    store: 'Postgres',
    urlFlag: 'database',
    urlEnv: 'DATABASE_URL',
    scopeFlag: 'schema',
    misspeltScopeFlag: 'shema',
    url: () => postgres!.url,
    queue: (url, schema) => createPostgresQueue({ connection: url, schema }),
    urlWithPassword: (port, password) =>
      `postgres://app:${password}@127.0.0.1:${String(port)}/alerts`,
    shownAs: (port) => `127.0.0.1:${String(port)}/alerts`,
  });

  it('creates and migrates nothing: a schema without the tables is an error naming it and --schema', async () => {
    for (const [args, schema] of [
      [['--schema', 'nothing_here'], 'nothing_here'],
      [[], 'churn_risk'],
    ] as const) {
      const result = await cli(['failed', 'list', '--database', postgres!.url, ...args]);
      expect(result.code).toBe(1);
      expect(result.out).toBe('');
      expect(result.err.trimEnd().split('\n')).toHaveLength(1);
      expect(result.err).toContain(`"${schema}"`);
      expect(result.err).toContain('--schema');
    }
    await sql(postgres!.url, 'CREATE SCHEMA empty_one');
    const empty = await cli([
      'failed',
      'retry',
      '--all',
      '--database',
      postgres!.url,
      '--schema',
      'empty_one',
    ]);
    expect(empty.code).toBe(1);
    expect(empty.err).toContain('"empty_one" holds no @churn-risk/postgres tables');
    const { rows } = await sql(
      postgres!.url,
      `SELECT nspname FROM pg_namespace WHERE nspname IN ('nothing_here', 'churn_risk')
       UNION ALL SELECT table_name FROM information_schema.tables WHERE table_schema = 'empty_one'`,
    );
    expect(rows).toEqual([]);
  });

  it('a wrong password: one line naming the host, never the user or the password', async () => {
    await sql(postgres!.url, "CREATE ROLE churner LOGIN PASSWORD 'right-pass'");
    await requirePassword(postgres!, 'churner');
    const url = urlAs(postgres!, 'churner', 'wrong-pass', 'postgres');
    const result = await cli(['failed', 'list', '--database', url, '--schema', 'cli']);
    expect(result.code).toBe(1);
    expect(result.err.trimEnd().split('\n')).toEqual([
      `churn-risk-postgres: cannot reach Postgres at 127.0.0.1:${String(postgres!.port)}/postgres ` +
        'within 5 s (password authentication failed: the user name or the password is wrong).',
    ]);
    expect(result.err).not.toContain('churner');
    expect(result.err).not.toContain('wrong-pass');
  });
});
