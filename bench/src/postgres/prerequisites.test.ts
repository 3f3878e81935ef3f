import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../lib/child.js';
import { missingPostgres, postgresBinDir } from './prerequisites.js';

describe('missingPostgres', () => {
  it('names every missing binary and the install command', () => {
    const message = missingPostgres('/opt/pg/bin', (path) => path.endsWith('postgres'));
    expect(message).toContain('/opt/pg/bin/initdb, /opt/pg/bin/pg_ctl are missing');
    expect(message).toContain('apt-get install -y postgresql');
    expect(message).toContain('PG_BIN_DIR');
  });

  it('is undefined when initdb, pg_ctl and postgres are all there', () => {
    expect(missingPostgres('/opt/pg/bin', () => true)).toBeUndefined();
  });

  it("reads PG_BIN_DIR, else Debian's PostgreSQL 15", () => {
    expect(postgresBinDir({ PG_BIN_DIR: '/opt/pg/bin' })).toBe('/opt/pg/bin');
    expect(postgresBinDir({ PG_BIN_DIR: '' })).toBe('/usr/lib/postgresql/15/bin');
    expect(postgresBinDir({})).toBe('/usr/lib/postgresql/15/bin');
  });
});

describe('pnpm bench postgres without PostgreSQL', () => {
  it('exits 1 with the message alone, before starting anything', async () => {
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['--import', 'tsx', join(REPO_ROOT, 'bench/src/run.ts'), 'postgres'],
        {
          cwd: REPO_ROOT,
          env: { ...process.env, PG_BIN_DIR: '/nonexistent/pg/bin' },
          timeout: 60_000,
        },
        (_error, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
      );
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'benchmark postgres failed: pnpm bench postgres runs a real PostgreSQL, and /nonexistent/pg/bin/initdb',
    );
    expect(result.stderr).not.toContain('    at '); // no stack trace
  }, 90_000);
});
