import { createReceiver } from '@churn-risk/core';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createPostgresQueue, createPostgresStore } from '../src/index.js';
import {
  deliveryOf,
  makeAlert,
  requirePassword,
  SECRET,
  sql,
  until,
  urlAs,
  usePostgres,
} from './helpers.js';

// Least privilege, as RDS, Neon or Supabase give it: a role that is not a superuser, logs in with a
// password, has no CREATE right on its database, and owns only a schema made for it beforehand.

const postgres = usePostgres();
const OWNER_PASSWORD = 'owner-s3cret';
const READER_PASSWORD = 'reader-s3cret';
let ownerUrl = '';
let readerUrl = '';

beforeAll(async () => {
  const server = postgres.server;
  await sql(server.url, `CREATE ROLE app_owner LOGIN PASSWORD '${OWNER_PASSWORD}'`);
  await sql(server.url, `CREATE ROLE app_reader LOGIN PASSWORD '${READER_PASSWORD}'`);
  await sql(server.url, 'CREATE DATABASE app');
  await sql(server.url, 'REVOKE CREATE ON DATABASE app FROM PUBLIC');
  const asSuperuserInApp = urlAs(server, 'postgres', '', 'app');
  await sql(asSuperuserInApp, 'CREATE SCHEMA churn_risk AUTHORIZATION app_owner');
  await requirePassword(server, 'app_owner');
  await requirePassword(server, 'app_reader');
  ownerUrl = urlAs(server, 'app_owner', OWNER_PASSWORD, 'app');
  readerUrl = urlAs(server, 'app_reader', READER_PASSWORD, 'app');
});

describe('a role that owns only its schema (password authentication)', () => {
  it('is enough: the store creates its tables in the schema given, and alerts flow', async () => {
    const { rows } = await sql(
      ownerUrl,
      `SELECT rolsuper, has_database_privilege('app', 'CREATE') AS can_create
       FROM pg_roles WHERE rolname = current_user`,
    );
    expect(rows).toEqual([{ rolsuper: false, can_create: false }]);
    // Eight processes starting at once as that role.
    const queues = Array.from({ length: 8 }, () => createPostgresQueue({ connection: ownerUrl }));
    postgres.open.queues.push(...queues.slice(1));
    const receiver = createReceiver({ secret: SECRET, queue: queues[0] as never });
    postgres.open.receivers.push(receiver);
    const handled: string[] = [];
    receiver.on('churn_risk_alert', (alert) => void handled.push(alert.userId));
    const healths = await Promise.all(queues.map((queue) => queue.health()));
    expect(healths).toEqual(Array(8).fill({ reachable: true }));
    const alert = makeAlert();
    expect((await receiver.handle(deliveryOf(alert))).status).toBe(202);
    await until(() => handled.length === 1, 'the handler');
    expect(handled).toEqual([alert.userId]);
  });

  it("a schema it may not create: accepts and health carry the server's reason and the statement to run, never the password", async () => {
    const store = createPostgresStore({ connection: ownerUrl, schema: 'not_given' });
    const receiver = createReceiver({
      secret: SECRET,
      queue: createPostgresQueue({ connection: ownerUrl, schema: 'not_given' }),
      consume: false,
    });
    postgres.open.receivers.push(receiver);
    try {
      const refused = await store
        .accept(
          { id: 'u:1', alert: makeAlert() as never, receivedAt: Date.now() },
          { dedupeTtlMs: 60_000 },
        )
        .then(
          () => undefined,
          (error: unknown) => error as Error,
        );
      expect(refused?.message).toMatch(/permission denied for database app/);
      const health = await store.health();
      expect(health.reachable).toBe(false);
      expect(health.error).toMatch(/permission denied for database app/);
      for (const text of [refused?.message, health.error]) {
        expect(text).toContain(
          'this role may not create the schema "not_given" (the `schema` option). Create it once ' +
            'as an admin and hand it to this role: CREATE SCHEMA not_given AUTHORIZATION app_owner;',
        );
        expect(text).not.toContain(OWNER_PASSWORD);
      }
      expect(refused).toMatchObject({ name: 'PostgresStoreError', code: '42501' });
      const lines: string[] = [];
      const spy = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
        lines.push(args.map(String).join(' '));
      });
      try {
        const answer = await receiver.handle(deliveryOf(makeAlert()));
        expect(answer.status).toBe(503);
        expect(answer.body).not.toMatch(/permission denied/);
      } finally {
        spy.mockRestore();
      }
      // The log line names the store's own refusal, not the handlers' speed.
      const line = lines.find((text) => text.includes('503 OVERLOADED')) ?? '';
      expect(line).toMatch(/permission denied for database app/);
      expect(line).toContain('CREATE SCHEMA not_given AUTHORIZATION app_owner;');
      expect(line).not.toContain(OWNER_PASSWORD);
      const receiverHealth = await receiver.health();
      expect(receiverHealth.queue).toMatchObject({ reachable: false });
      expect(receiverHealth.queue?.error).toMatch(/permission denied for database app/);
    } finally {
      await store.close();
    }
  });

  it('the statement the error gives, quoted for a role whose name needs it, run as an admin, is the fix', async () => {
    const server = postgres.server;
    await sql(server.url, 'CREATE ROLE "Ops-Team" LOGIN');
    const opsUrl = urlAs(server, 'Ops-Team', '', 'app');
    const store = createPostgresStore({ connection: opsUrl, schema: 'ops_alerts' });
    try {
      const health = await store.health();
      expect(health.reachable).toBe(false);
      const statement = /CREATE SCHEMA [^;]*;/.exec(health.error ?? '')?.[0];
      expect(statement).toBe('CREATE SCHEMA ops_alerts AUTHORIZATION "Ops-Team";');
      await sql(urlAs(server, 'postgres', '', 'app'), statement ?? '');
      expect(await store.health()).toEqual({ reachable: true });
      const { rows } = await sql(
        opsUrl,
        `SELECT nspowner::regrole::text AS owner FROM pg_namespace WHERE nspname = 'ops_alerts'`,
      );
      expect(rows).toEqual([{ owner: '"Ops-Team"' }]);
    } finally {
      await store.close();
    }
  });

  it('a role that may only read the tables: health says it cannot write', async () => {
    const asSuperuserInApp = urlAs(postgres.server, 'postgres', '', 'app');
    await sql(asSuperuserInApp, 'GRANT USAGE ON SCHEMA churn_risk TO app_reader');
    await sql(asSuperuserInApp, 'GRANT SELECT ON ALL TABLES IN SCHEMA churn_risk TO app_reader');
    const store = createPostgresStore({ connection: readerUrl });
    try {
      const health = await store.health();
      expect(health.reachable).toBe(false);
      expect(health.error).toMatch(/permission denied/);
      expect(health.error).not.toContain(READER_PASSWORD);
      await expect(
        store.accept(
          { id: 'u:2', alert: makeAlert() as never, receivedAt: Date.now() },
          { dedupeTtlMs: 60_000 },
        ),
      ).rejects.toThrow(/permission denied for table alert_identities/);
    } finally {
      await store.close();
    }
  });
});
