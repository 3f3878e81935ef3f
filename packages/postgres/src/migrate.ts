import type pg from 'pg';
import { withClient } from './connection.js';
import { PostgresSchemaError } from './errors.js';
import { LATEST_VERSION, MIGRATIONS, migrationLockKey, type Statements } from './sql.js';

interface Probe {
  has_schema: boolean;
  has_migrations: boolean;
}

async function versionOf(client: pg.PoolClient, sql: Statements): Promise<number> {
  const { rows } = await client.query<{ version: number }>(sql.version);
  return rows[0]?.version ?? 0;
}

function newer(schema: string, version: number): PostgresSchemaError {
  return new PostgresSchemaError(
    schema,
    `The tables in the schema "${schema}" are at version ${String(version)}, newer than this ` +
      `@churn-risk/postgres knows (${String(LATEST_VERSION)}): upgrade the package.`,
  );
}

async function probe(client: pg.PoolClient, schema: string, sql: Statements): Promise<Probe> {
  const { rows } = await client.query<Probe>(sql.probe, [schema]);
  return rows[0] ?? { has_schema: false, has_migrations: false };
}

/** SQLSTATE `insufficient_privilege`. */
const INSUFFICIENT_PRIVILEGE = '42501';

/**
 * Creates the missing schema. A role without the database's CREATE right is refused with the
 * server's error, its message completed with the statement an admin runs instead (the schema and
 * this role, quoted by the server's own `quote_ident`, read before the attempt: after a refusal
 * the transaction takes no more statements) and the option that names the schema.
 */
async function createSchema(client: pg.PoolClient, schema: string, sql: Statements): Promise<void> {
  const { rows } = await client.query<{ schema: string; role: string }>(
    'SELECT quote_ident($1) AS schema, quote_ident(current_user) AS role',
    [schema],
  );
  try {
    await client.query(sql.createSchema);
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    const names = rows[0];
    if (code !== INSUFFICIENT_PRIVILEGE || names === undefined || !(error instanceof Error)) {
      throw error;
    }
    throw Object.assign(
      new Error(
        `${error.message}: this role may not create the schema "${schema}" (the \`schema\` ` +
          'option). Create it once as an admin and hand it to this role: ' +
          `CREATE SCHEMA ${names.schema} AUTHORIZATION ${names.role}; or name a schema this ` +
          'role owns in `schema`.',
        { cause: error },
      ),
      { code },
    );
  }
}

/**
 * Brings the schema's tables to `LATEST_VERSION`. Creates only what is missing: a schema that
 * exists is never created again (`CREATE SCHEMA IF NOT EXISTS` would need the database's CREATE
 * right even then), so a role that owns only its schema is enough. The changes run in one
 * transaction under an advisory lock of the schema, so that many processes starting at once apply
 * each version once; a schema already at the latest version takes no lock.
 */
export async function migrate(pool: pg.Pool, schema: string, sql: Statements): Promise<void> {
  await withClient(await pool.connect(), async (client) => {
    const first = await probe(client, schema, sql);
    if (first.has_migrations) {
      const version = await versionOf(client, sql);
      if (version === LATEST_VERSION) return;
      if (version > LATEST_VERSION) throw newer(schema, version);
    }
    await client.query('BEGIN');
    try {
      // A transaction lock (a session lock would outlive its transaction behind a
      // transaction-pooling PgBouncer, on a server connection another client gets next).
      const [key1, key2] = migrationLockKey(schema);
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', [key1, key2]);
      const now = await probe(client, schema, sql);
      if (!now.has_schema) await createSchema(client, schema, sql);
      if (!now.has_migrations) await client.query(sql.createMigrations);
      const version = await versionOf(client, sql);
      if (version > LATEST_VERSION) throw newer(schema, version);
      for (const migration of MIGRATIONS) {
        if (migration.version <= version) continue;
        await client.query(migration.sql.replaceAll('{schema}', schema));
        await client.query(sql.recordMigration, [migration.version]);
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }); // a client whose transaction failed midway is dropped rather than reused
}

/**
 * Checks that the schema holds the store's tables at the version this code knows, creating and
 * changing nothing (the CLI's start): a `PostgresSchemaError` naming the schema when it does not.
 */
export async function checkTables(pool: pg.Pool, schema: string, sql: Statements): Promise<void> {
  await withClient(
    await pool.connect(),
    async (client) => {
      const found = await probe(client, schema, sql);
      if (!found.has_migrations) {
        throw new PostgresSchemaError(
          schema,
          found.has_schema
            ? `The schema "${schema}" holds no @churn-risk/postgres tables.`
            : `There is no schema "${schema}" in this database.`,
        );
      }
      const version = await versionOf(client, sql);
      if (version > LATEST_VERSION) throw newer(schema, version);
      if (version < LATEST_VERSION) {
        throw new PostgresSchemaError(
          schema,
          `The tables in the schema "${schema}" are at version ${String(version)}: start a ` +
            `process of this @churn-risk/postgres once to migrate them to ${String(LATEST_VERSION)}.`,
        );
      }
    },
    (error) => !(error instanceof PostgresSchemaError), // a schema error leaves a usable connection
  );
}
