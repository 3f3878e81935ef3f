/**
 * The SQL of the Postgres store: its own statements against pg-boss's job table (a fenced take and
 * fenced writes, which pg-boss's fetch and complete do not offer) and its identity table. Every
 * statement names the queue (`name = $1`), so it only ever touches the store's own jobs.
 */

/** The pg-boss queue that holds the alerts. */
export const QUEUE = 'churn-risk-alerts';

/** The database's clock in ms since the epoch: leases are measured on it, never on a process's. */
const NOW_MS = `(extract(epoch from now()) * 1000)::bigint`;

/** The rows `token` leases now. */
const FENCE = `name = $1 AND id = $2::uuid AND state = 'active'
  AND data->'lease'->>'token' = $3 AND (data->'lease'->>'until')::bigint > ${NOW_MS}`;

/** A job waiting or delayed is never deleted by pg-boss's retention while it waits. */
const KEEP_WAITING = `now() + interval '50 years'`;

/** The statements of one schema. `schema` is checked (a lower-case SQL name) before it gets here. */
export function statements(schema: string) {
  const job = `${schema}.job`;
  const identity = `${schema}.alert_identity`;
  return {
    /** Idempotent, under a lock (CREATE TABLE IF NOT EXISTS alone races with itself). */
    createIdentityTable: `
      SELECT pg_advisory_xact_lock(hashtext('${schema}.alert_identity'));
      CREATE TABLE IF NOT EXISTS ${identity} (
        alert_id text PRIMARY KEY,
        job_id uuid NOT NULL,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX IF NOT EXISTS alert_identity_expires_at ON ${identity} (expires_at);`,
    /** $1 alert id, $2 job id, $3 ttl ms: a row when the identity was free (or expired). */
    claimIdentity: `
      INSERT INTO ${identity} (alert_id, job_id, expires_at)
      VALUES ($1, $2::uuid, now() + $3::bigint * interval '1 millisecond')
      ON CONFLICT (alert_id) DO UPDATE
        SET job_id = EXCLUDED.job_id, expires_at = EXCLUDED.expires_at
        WHERE ${identity}.expires_at <= now()
      RETURNING alert_id`,
    /** Deletes up to 10,000 expired identities. */
    sweepIdentities: `
      DELETE FROM ${identity} WHERE alert_id IN (
        SELECT alert_id FROM ${identity} WHERE expires_at <= now() LIMIT 10000
      )`,
    /**
     * $1 queue, $2 token, $3 lease ms. The oldest due alert, read in the order of pg-boss's own
     * fetch index (`job_i11`: name, priority DESC, created_on, start_after, over jobs not yet
     * active and not blocked), so that a take reads a few index entries however many alerts wait
     * (ordered by start_after instead, every take sorted the whole backlog: 12-19 ms with 20,000
     * waiting, `pnpm bench postgres`).
     */
    take: `
      WITH next AS (
        SELECT id FROM ${job}
        WHERE name = $1 AND state < 'active' AND NOT blocked AND start_after <= now()
        ORDER BY priority DESC, created_on, id
        LIMIT 1
        FOR UPDATE SKIP LOCKED
      )
      UPDATE ${job} AS j
      SET state = 'active', started_on = now(),
        data = jsonb_set(j.data, '{lease}',
          jsonb_build_object('token', $2::text, 'until', ${NOW_MS} + $3::bigint))
      FROM next
      WHERE j.name = $1 AND j.id = next.id
      RETURNING j.id, j.data`,
    /** $1 queue, $2 id, $3 token, $4 lease ms. */
    extend: `
      UPDATE ${job}
      SET data = jsonb_set(data, '{lease,until}', to_jsonb(${NOW_MS} + $4::bigint))
      WHERE ${FENCE}
      RETURNING id`,
    /** $1 queue, $2 id, $3 token, $4 seconds a completed job is kept. */
    complete: `
      UPDATE ${job}
      SET state = 'completed', completed_on = now(), deletion_seconds = $4::int,
        data = data - 'lease'
      WHERE ${FENCE}
      RETURNING id`,
    /** $1 queue, $2 id, $3 token, $4 delay ms, $5 succeeded (json), $6 error message. */
    scheduleRetry: `
      UPDATE ${job}
      SET state = 'retry', start_after = now() + $4::bigint * interval '1 millisecond',
        retry_count = retry_count + 1, keep_until = ${KEEP_WAITING},
        data = (data - 'lease') || jsonb_build_object(
          'tries', coalesce((data->>'tries')::int, 0) + 1, 'succeeded', $5::jsonb, 'error', $6::text)
      WHERE ${FENCE}
      RETURNING id`,
    /** $1 queue, $2 id, $3 token, $4 succeeded (json), $5 error message, $6 seconds kept. */
    fail: `
      UPDATE ${job}
      SET state = 'failed', completed_on = now(), deletion_seconds = $6::int,
        output = jsonb_build_object('message', $5::text),
        data = (data - 'lease') || jsonb_build_object(
          'tries', coalesce((data->>'tries')::int, 0) + 1, 'succeeded', $4::jsonb, 'error', $5::text)
      WHERE ${FENCE}
      RETURNING id`,
    /** $1 queue. */
    reclaim: `
      UPDATE ${job}
      SET state = 'retry', start_after = now(), keep_until = ${KEEP_WAITING},
        data = (data - 'lease') || jsonb_build_object(
          'stalls', coalesce((data->>'stalls')::int, 0) + 1)
      WHERE name = $1 AND state = 'active'
        AND coalesce((data->'lease'->>'until')::bigint, 0) <= ${NOW_MS}
      RETURNING id`,
    /** $1 queue, $2 limit, $3 offset. */
    failed: `
      SELECT id, data, completed_on FROM ${job}
      WHERE name = $1 AND state = 'failed'
      ORDER BY completed_on DESC, id
      LIMIT $2 OFFSET $3`,
    /** $1 queue, $2 job id or alert identity (null: every failed alert, a snapshot). */
    retry: `
      UPDATE ${job}
      SET state = 'created', start_after = now(), completed_on = NULL, output = NULL,
        keep_until = ${KEEP_WAITING},
        data = (data - 'error') || jsonb_build_object('tries', 0, 'stalls', 0)
      WHERE name = $1 AND state = 'failed'
        AND ($2::text IS NULL OR id::text = $2 OR data->>'alertId' = $2)
      RETURNING id`,
    /** $1 queue. */
    counts: `
      SELECT
        count(*) FILTER (WHERE state < 'active' AND start_after <= now())::int AS waiting,
        count(*) FILTER (WHERE state = 'active')::int AS active,
        count(*) FILTER (WHERE state < 'active' AND start_after > now())::int AS delayed,
        count(*) FILTER (WHERE state = 'failed')::int AS failed,
        count(*) FILTER (WHERE state = 'completed')::int AS completed
      FROM ${job} WHERE name = $1`,
    /** $1 queue. */
    depth: `SELECT count(*)::int AS depth FROM ${job} WHERE name = $1 AND state < 'active'`,
  };
}
