/**
 * The SQL of the Postgres store, on its own tables in one schema:
 *
 * - `alerts`: one row per accepted alert while it waits, runs or sits in the failed set
 *   (`state`: `waiting` (due at `due_at`), `active` (leased to `lease_token` until `lease_until`,
 *   on the database's clock) or `failed`); a completed alert's row is deleted;
 * - `alert_identities`: the identities `userId:triggeredAt` with their expiry, which outlive the
 *   alert's row (de-duplication for `dedupeTtlMs`);
 * - `alert_users` (order per user): per user, the newest `triggeredAt` accepted (`newest_at`, ms)
 *   with its expiry, at least the TTL of the identities after the user's last acceptance (from
 *   version 4 moved only when less than that is left, then a tenth of the TTL further: see
 *   `ACCEPT_IN_ORDER_V4`), and `head`, the alert of the user that may run (a user whose line is
 *   not empty keeps its row past the expiry). Its rows are updated in place (fill factor 50);
 * - `migrations`: the versions applied.
 *
 * Order per user: an alert accepted in order keeps its user and time (`user_id`, `order_at`). Each
 * user's alerts form a line: its head is `waiting`, `active`, or waiting for a retry's delay like
 * any alert accepted without order, and the user's other alerts are `queued` behind it
 * (`alerts_queue`: by user, time, then the first accepted). So a take in order is a plain take, and
 * the functions of version 3 (see `LINE_FUNCTIONS`) keep the lines: the acceptance, the end of a
 * head and a retry of a failed alert, under the user's lock.
 *
 * Every write of a taker is fenced by its token and the lease's end; the store writes the tries,
 * stalls and record core computed and increments nothing. Every statement is one round trip, and
 * statements that change several rows are one statement (a CTE or a function), so they are
 * atomic. The column `holds` of version 2 is no longer written (always false).
 */

/** The versions of the tables, in order: a process applies those its schema lacks, at start. */
export interface Migration {
  version: number;
  /** The statements, with `{schema}` for the schema (a checked lower-case SQL name). */
  sql: string;
}

/**
 * `complete_and_take_in_order` (see `LINE_FUNCTIONS`), as version 5 writes it: its take leases the
 * row by its id as a value, as `takeCtes` does (version 3's joined it to `next`, which the planner
 * turned into a read of every row when the statistics counted the table empty). Version 3 creates
 * it as it is now, and version 5 replaces the one a schema migrated earlier has.
 */
const COMPLETE_AND_TAKE_IN_ORDER = `
      CREATE OR REPLACE FUNCTION {schema}.complete_and_take_in_order(p_id bigint, p_token text,
        p_next text, p_lease bigint, p_sticky boolean)
      RETURNS TABLE (completed int, id bigint, entry text, tries int, succeeded text[],
        stalls int, lapsed boolean, user_id text, order_at bigint, newest float8, released boolean,
        followed boolean)
      LANGUAGE plpgsql AS $f$
      #variable_conflict use_column
      DECLARE d_user text; d_done int := 0; nxt bigint; n_at bigint; n_until timestamptz;
        moved boolean := false;
      BEGIN
        DELETE FROM {schema}.alerts AS a
        WHERE a.id = p_id AND a.lease_token = p_token AND a.lease_until > now()
        RETURNING a.user_id INTO d_user;
        IF FOUND THEN d_done := 1; END IF;
        IF d_user IS NOT NULL THEN
          -- advance(), inline: the drain's hot path.
          PERFORM pg_advisory_xact_lock(hashtext('{schema}'), hashtext(d_user));
          UPDATE {schema}.alert_users AS u SET head = (
            SELECT q.id FROM {schema}.alerts AS q
            WHERE q.user_id = d_user AND q.state = 'queued'
            ORDER BY q.order_at, q.id LIMIT 1)
          WHERE u.user_id = d_user AND u.head = p_id
          RETURNING u.head, u.newest_at, u.expires_at INTO nxt, n_at, n_until;
          IF nxt IS NOT NULL AND p_sticky THEN
            RETURN QUERY WITH t AS (
              UPDATE {schema}.alerts AS a SET state = 'active', lease_token = p_next,
                lease_until = now() + p_lease * interval '1 millisecond'
              WHERE a.id = nxt
              RETURNING a.id, a.entry, a.tries, a.succeeded, a.stalls, a.lapsed, a.user_id,
                a.order_at
            )
            SELECT d_done, t.id, t.entry, t.tries, t.succeeded, t.stalls, t.lapsed, t.user_id,
              t.order_at, (CASE WHEN n_until > now() THEN greatest(n_at, t.order_at)
                ELSE t.order_at END)::float8, false, true
            FROM t;
            RETURN;
          END IF;
          IF nxt IS NOT NULL THEN
            UPDATE {schema}.alerts SET state = 'waiting' WHERE id = nxt;
            moved := true;
          END IF;
        END IF;
        RETURN QUERY WITH next AS (
          SELECT a.id FROM {schema}.alerts AS a
          WHERE a.state = 'waiting' AND a.due_at <= now()
          ORDER BY a.due_at, a.id
          LIMIT 1
          FOR UPDATE SKIP LOCKED
        ), taken AS (
          UPDATE {schema}.alerts AS a
          SET state = 'active', lease_token = p_next,
            lease_until = now() + p_lease * interval '1 millisecond'
          WHERE a.id = (SELECT next.id FROM next)
          RETURNING a.id, a.entry, a.tries, a.succeeded, a.stalls, a.lapsed, a.user_id, a.order_at
        )
        SELECT d_done, t.id, t.entry, t.tries, t.succeeded, t.stalls, t.lapsed, t.user_id,
          t.order_at, CASE WHEN t.user_id IS NOT NULL THEN coalesce((
            SELECT greatest(n.newest_at, t.order_at) FROM {schema}.alert_users AS n
            WHERE n.user_id = t.user_id AND n.expires_at > now()
          ), t.order_at)::float8 END,
          moved, false
        FROM (SELECT 1) AS one LEFT JOIN taken AS t ON true;
      END $f$;`;

/**
 * The functions of the order per user (version 3), in PL/pgSQL: each statement in them reads with
 * a snapshot of its own, taken after the user's lock (`pg_advisory_xact_lock` on the schema and
 * the user), so that an accept and the end of the user's head, in any processes, always see each
 * other's rows. The lock is the database's, held until the transaction's end; a take does not
 * take it (every alert in `alerts_due` may start).
 *
 * - `join_line(id, user)`: alert `id` (queued) joins its user's line: it becomes the head (waiting)
 *   when the user has none, or when the head is newer and never started (no try, no stall, not
 *   taken over: it queues behind the new one); else it stays queued. True when it became the head.
 * - `advance(user, ended, token, lease, notify)`: the head `ended` completed or failed for good:
 *   the user's oldest queued alert becomes the head, leased to `token` for `lease` ms when a token
 *   is given (the completing take goes on with it), else waiting (the consumers notified when
 *   `notify`: a completing take moves it up without, and takes next itself). Its id, or null (the
 *   line is empty, or `ended` was not the head).
 * - `accept_in_order(...)`: `acceptInOrder`'s claim, newest time and alert, queued, then
 *   `join_line`; the alert's id when accepted (`waiting`: it became the head), no row for a
 *   duplicate. Replaced by version 4 (`ACCEPT_IN_ORDER_V4`), which writes the user's expiry less
 *   often.
 * - `complete_and_take_in_order(id, token, next, lease, sticky)`: the completion, the advance of
 *   the user's line, and a take: the user's next alert when `sticky` and there is one, else the
 *   oldest due alert.
 * - `put_back(ids)`: failed alerts put back (`retry`, `retryAll`), locked in the order of their
 *   ids and their users' locks taken in one order (so that put-backs at once never deadlock): an
 *   alert accepted without order waits, one in order joins its user's line.
 */
const LINE_FUNCTIONS = `
      CREATE FUNCTION {schema}.join_line(p_id bigint, p_user text) RETURNS boolean
      LANGUAGE plpgsql AS $f$
      DECLARE h bigint;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('{schema}'), hashtext(p_user));
        SELECT u.head INTO h FROM {schema}.alert_users AS u
        WHERE u.user_id = p_user AND EXISTS (
          SELECT 1 FROM {schema}.alerts AS a WHERE a.id = u.head AND a.state IN ('waiting', 'active'));
        IF NOT FOUND THEN
          INSERT INTO {schema}.alert_users (user_id, newest_at, expires_at)
          SELECT p_user, a.order_at, now() FROM {schema}.alerts AS a WHERE a.id = p_id
          ON CONFLICT (user_id) DO NOTHING;
        END IF;
        IF h IS NOT NULL THEN
          UPDATE {schema}.alerts AS a SET state = 'queued'
          FROM {schema}.alerts AS n
          WHERE a.id = h AND n.id = p_id AND a.state = 'waiting' AND a.tries = 0 AND a.stalls = 0
            AND NOT a.lapsed AND (a.order_at, a.id) > (n.order_at, n.id);
          IF NOT FOUND THEN RETURN false; END IF;
        END IF;
        UPDATE {schema}.alerts SET state = 'waiting' WHERE id = p_id;
        UPDATE {schema}.alert_users SET head = p_id WHERE user_id = p_user;
        RETURN true;
      END $f$;

      CREATE FUNCTION {schema}.advance(p_user text, p_ended bigint, p_token text, p_lease bigint,
        p_notify boolean)
      RETURNS bigint LANGUAGE plpgsql AS $f$
      DECLARE nxt bigint;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('{schema}'), hashtext(p_user));
        SELECT a.id INTO nxt FROM {schema}.alerts AS a
        WHERE a.user_id = p_user AND a.state = 'queued'
        ORDER BY a.order_at, a.id LIMIT 1;
        UPDATE {schema}.alert_users SET head = nxt WHERE user_id = p_user AND head = p_ended;
        IF NOT FOUND OR nxt IS NULL THEN RETURN NULL; END IF;
        IF p_token IS NOT NULL THEN
          UPDATE {schema}.alerts SET state = 'active', lease_token = p_token,
            lease_until = now() + p_lease * interval '1 millisecond'
          WHERE id = nxt;
        ELSE
          UPDATE {schema}.alerts SET state = 'waiting' WHERE id = nxt;
          IF p_notify THEN PERFORM pg_notify('churn_risk.{schema}', '0'); END IF;
        END IF;
        RETURN nxt;
      END $f$;

      CREATE FUNCTION {schema}.accept_in_order(p_alert text, p_entry text, p_ttl bigint,
        p_first boolean, p_user text, p_at bigint)
      RETURNS TABLE (id bigint, waiting boolean) LANGUAGE plpgsql AS $f$
      #variable_conflict use_column
      DECLARE new_id bigint;
      BEGIN
        INSERT INTO {schema}.alert_identities AS i (alert_id, expires_at)
        VALUES (p_alert, now() + p_ttl * interval '1 millisecond')
        ON CONFLICT (alert_id) DO UPDATE SET expires_at = EXCLUDED.expires_at
          WHERE i.expires_at <= now();
        IF NOT FOUND THEN RETURN; END IF;
        -- The user's lock before its row: the end of a head takes them in this order too.
        PERFORM pg_advisory_xact_lock(hashtext('{schema}'), hashtext(p_user));
        INSERT INTO {schema}.alert_users AS u (user_id, newest_at, expires_at)
        VALUES (p_user, p_at, now() + p_ttl * interval '1 millisecond')
        ON CONFLICT (user_id) DO UPDATE SET
          newest_at = CASE WHEN u.expires_at > now()
            THEN greatest(u.newest_at, EXCLUDED.newest_at) ELSE EXCLUDED.newest_at END,
          expires_at = greatest(u.expires_at, EXCLUDED.expires_at);
        INSERT INTO {schema}.alerts (alert_id, entry, due_at, user_id, order_at, state)
        VALUES (p_alert, p_entry, CASE WHEN p_first
          THEN timestamptz 'epoch' - (now() - timestamptz 'epoch') ELSE now() END,
          p_user, p_at, 'queued')
        RETURNING alerts.id INTO new_id;
        IF {schema}.join_line(new_id, p_user) THEN
          PERFORM pg_notify('churn_risk.{schema}', '0');
          RETURN QUERY SELECT new_id, true;
        ELSE
          RETURN QUERY SELECT new_id, false;
        END IF;
      END $f$;

${COMPLETE_AND_TAKE_IN_ORDER}

      CREATE FUNCTION {schema}.put_back(p_ids bigint[]) RETURNS int
      LANGUAGE plpgsql AS $f$
      DECLARE ids bigint[]; r record; n int := 0;
      BEGIN
        ids := ARRAY(SELECT a.id FROM {schema}.alerts AS a
          WHERE a.id = ANY(p_ids) AND a.state = 'failed' AND a.failed_at <= now()
          ORDER BY a.id FOR UPDATE);
        PERFORM pg_advisory_xact_lock(hashtext('{schema}'), u.h) FROM (
          SELECT DISTINCT hashtext(a.user_id) AS h FROM {schema}.alerts AS a
          WHERE a.id = ANY(ids) AND a.user_id IS NOT NULL ORDER BY 1) AS u;
        FOR r IN SELECT a.id, a.user_id FROM {schema}.alerts AS a
          WHERE a.id = ANY(ids) ORDER BY a.id
        LOOP
          UPDATE {schema}.alerts SET due_at = now(), tries = 0, stalls = 0, lapsed = false,
            error = NULL, failed_at = NULL, holds = false,
            state = CASE WHEN r.user_id IS NULL THEN 'waiting' ELSE 'queued' END
          WHERE id = r.id;
          IF r.user_id IS NOT NULL THEN PERFORM {schema}.join_line(r.id, r.user_id); END IF;
          n := n + 1;
        END LOOP;
        IF n > 0 THEN PERFORM pg_notify('churn_risk.{schema}', '0'); END IF;
        RETURN n;
      END $f$;`;

/**
 * The fill factor of `alert_users` from version 4: every row of it is rewritten at each accept and
 * at each end of its user's head, so half of each page is left for the new versions (an update in
 * place, HOT, needs room on the row's page; the dead versions are pruned as pages fill up).
 */
const USERS_FILLFACTOR = 50;

/**
 * `accept_in_order` from version 4 (the same claim, alert and line as version 3's): the user's
 * `expires_at` is written only when it must move, when it is less than `ttl` away; it then goes
 * `ttl` plus a tenth of `ttl` away (never back). So the newest time is still remembered at least
 * `dedupeTtlMs` after each acceptance (at most a tenth of it longer), the indexed column changes
 * once per tenth of the TTL at most, and every other write of the row leaves the indexes alone and
 * can be HOT. A row that would not change (an older time, the expiry far enough) is not written.
 */
const ACCEPT_IN_ORDER_V4 = `
      CREATE OR REPLACE FUNCTION {schema}.accept_in_order(p_alert text, p_entry text,
        p_ttl bigint, p_first boolean, p_user text, p_at bigint)
      RETURNS TABLE (id bigint, waiting boolean) LANGUAGE plpgsql AS $f$
      #variable_conflict use_column
      DECLARE new_id bigint;
      BEGIN
        INSERT INTO {schema}.alert_identities AS i (alert_id, expires_at)
        VALUES (p_alert, now() + p_ttl * interval '1 millisecond')
        ON CONFLICT (alert_id) DO UPDATE SET expires_at = EXCLUDED.expires_at
          WHERE i.expires_at <= now();
        IF NOT FOUND THEN RETURN; END IF;
        -- The user's lock before its row: the end of a head takes them in this order too.
        PERFORM pg_advisory_xact_lock(hashtext('{schema}'), hashtext(p_user));
        INSERT INTO {schema}.alert_users AS u (user_id, newest_at, expires_at)
        VALUES (p_user, p_at, now() + (p_ttl + p_ttl / 10) * interval '1 millisecond')
        ON CONFLICT (user_id) DO UPDATE SET
          newest_at = CASE WHEN u.expires_at > now()
            THEN greatest(u.newest_at, EXCLUDED.newest_at) ELSE EXCLUDED.newest_at END,
          expires_at = CASE WHEN u.expires_at >= now() + p_ttl * interval '1 millisecond'
            THEN u.expires_at ELSE EXCLUDED.expires_at END
        WHERE u.expires_at <= now() OR u.expires_at < now() + p_ttl * interval '1 millisecond'
          OR u.newest_at < EXCLUDED.newest_at;
        INSERT INTO {schema}.alerts (alert_id, entry, due_at, user_id, order_at, state)
        VALUES (p_alert, p_entry, CASE WHEN p_first
          THEN timestamptz 'epoch' - (now() - timestamptz 'epoch') ELSE now() END,
          p_user, p_at, 'queued')
        RETURNING alerts.id INTO new_id;
        IF {schema}.join_line(new_id, p_user) THEN
          PERFORM pg_notify('churn_risk.{schema}', '0');
          RETURN QUERY SELECT new_id, true;
        ELSE
          RETURN QUERY SELECT new_id, false;
        END IF;
      END $f$;`;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE {schema}.alert_identities (
        alert_id text PRIMARY KEY,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX alert_identities_expires_at ON {schema}.alert_identities (expires_at);
      CREATE TABLE {schema}.alerts (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        alert_id text NOT NULL,
        entry text NOT NULL,
        state text NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting', 'active', 'failed')),
        due_at timestamptz NOT NULL DEFAULT now(),
        tries integer NOT NULL DEFAULT 0,
        stalls integer NOT NULL DEFAULT 0,
        lapsed boolean NOT NULL DEFAULT false,
        succeeded text[] NOT NULL DEFAULT '{}',
        error text,
        lease_token text,
        lease_until timestamptz,
        failed_at timestamptz
      );
      CREATE INDEX alerts_due ON {schema}.alerts (due_at, id) WHERE state = 'waiting';
      CREATE INDEX alerts_lease ON {schema}.alerts (lease_until) WHERE state = 'active';
      CREATE INDEX alerts_failed ON {schema}.alerts (failed_at, id) WHERE state = 'failed';
      CREATE INDEX alerts_failed_alert_id ON {schema}.alerts (alert_id) WHERE state = 'failed';`,
  },
  {
    // Order per user. Additive: three columns (no rewrite of the table: two are null, one has a
    // constant default), two indexes that hold no row of an alert accepted without order, and a
    // new table.
    version: 2,
    sql: `
      ALTER TABLE {schema}.alerts ADD COLUMN user_id text, ADD COLUMN order_at bigint,
        ADD COLUMN holds boolean NOT NULL DEFAULT false;
      CREATE INDEX alerts_user_line ON {schema}.alerts (user_id, holds DESC, order_at, id)
        WHERE user_id IS NOT NULL AND (state = 'waiting' OR holds);
      CREATE UNIQUE INDEX alerts_holder ON {schema}.alerts (user_id) WHERE holds;
      CREATE TABLE {schema}.alert_users (
        user_id text PRIMARY KEY,
        newest_at bigint NOT NULL,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX alert_users_expires_at ON {schema}.alert_users (expires_at);`,
  },
  {
    // Order per user, head of line: only each user's head (the alert that may run: waiting,
    // delayed for a retry, or active) is in `alerts_due`; the user's later alerts are `queued`
    // behind it, and the end of the head moves the next one up. A take in order is a plain take.
    version: 3,
    sql: `
      ALTER TABLE {schema}.alerts DROP CONSTRAINT alerts_state_check;
      ALTER TABLE {schema}.alerts ADD CONSTRAINT alerts_state_check
        CHECK (state IN ('waiting', 'active', 'failed', 'queued'));
      ALTER TABLE {schema}.alert_users ADD COLUMN head bigint;
      INSERT INTO {schema}.alert_users (user_id, newest_at, expires_at)
        SELECT user_id, max(order_at), now() FROM {schema}.alerts
        WHERE user_id IS NOT NULL AND (state = 'waiting' OR holds) GROUP BY user_id
        ON CONFLICT (user_id) DO NOTHING;
      UPDATE {schema}.alert_users AS u SET head = h.id FROM (
        SELECT DISTINCT ON (user_id) user_id, id FROM {schema}.alerts
        WHERE user_id IS NOT NULL AND (state = 'waiting' OR holds)
        ORDER BY user_id, holds DESC, order_at, id
      ) AS h WHERE u.user_id = h.user_id;
      UPDATE {schema}.alerts SET state = 'queued'
        WHERE user_id IS NOT NULL AND state = 'waiting'
          AND id NOT IN (SELECT head FROM {schema}.alert_users WHERE head IS NOT NULL);
      UPDATE {schema}.alerts SET holds = false WHERE holds;
      DROP INDEX {schema}.alerts_user_line;
      DROP INDEX {schema}.alerts_holder;
      CREATE INDEX alerts_queue ON {schema}.alerts (user_id, order_at, id) WHERE state = 'queued';
      ${LINE_FUNCTIONS}`,
  },
  {
    // The users' rows updated in place (HOT): the acceptance of version 3 moved `expires_at`, an
    // indexed column, at every accept, so none of those updates could stay on the row's page, and
    // each added an entry to both indexes of `alert_users`. Compatible with the processes of
    // version 3 still running: the function keeps its name and arguments, the columns their
    // meaning. The fill factor applies to the pages written from now on.
    version: 4,
    sql: `
      ALTER TABLE {schema}.alert_users SET (fillfactor = ${String(USERS_FILLFACTOR)});
      ${ACCEPT_IN_ORDER_V4}`,
  },
  {
    // The take of the completion in order leases the row by its id, whatever the statistics say
    // (see `COMPLETE_AND_TAKE_IN_ORDER`). The function keeps its name, arguments and results:
    // processes of version 4 already running call it as before.
    version: 5,
    sql: COMPLETE_AND_TAKE_IN_ORDER,
  },
];

/** The version this code writes: a schema at it needs no migration. */
export const LATEST_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

/** The `LISTEN` channel of a schema: its alerts' wake-ups. */
export function channelOf(schema: string): string {
  return `churn_risk.${schema}`;
}

/** The advisory lock key of a schema's migrations (`pg_advisory_xact_lock(int, int)`). */
export function migrationLockKey(schema: string): [number, number] {
  let hash = 0x811c9dc5; // FNV-1a
  for (const char of schema) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193);
  }
  return [0x43524b31, hash | 0]; // 'CRK1', the schema
}

const MS = `* interval '1 millisecond'`;

/**
 * What a take selects and leases; `$token` and `$lease` are its parameter numbers. The row is
 * leased by its id as a value (`a.id = (SELECT id FROM next)`, one lookup in the primary key),
 * never as a join with `next`: with the table's statistics taken while it was nearly empty (an
 * autovacuum that ran between two bursts and could not truncate the table leaves it counted at 0
 * rows on hundreds of pages), the planner joined every row of the primary key to `next`, and a
 * drain of 10,000 alerts ran at 480 alerts/s instead of 3,500 (8,600 rows read per take).
 *
 * `after`: a CTE of the same statement that runs before the take looks for a row (its count is
 * a one-time condition of the scan), so that the statement holds that CTE's rows first and no
 * row it is about to take. See `completeAndTake`.
 */
function takeCtes(alerts: string, token: number, lease: number, after?: string): string {
  const first = after === undefined ? '' : ` AND (SELECT count(*) FROM ${after}) >= 0`;
  return `next AS (
      SELECT id FROM ${alerts}
      WHERE state = 'waiting' AND due_at <= now()${first}
      ORDER BY due_at, id
      LIMIT 1
      FOR UPDATE SKIP LOCKED
    ), taken AS (
      UPDATE ${alerts} AS a
      SET state = 'active', lease_token = $${String(token)},
        lease_until = now() + $${String(lease)}::bigint ${MS}
      WHERE a.id = (SELECT id FROM next)
      RETURNING a.id, a.entry, a.tries, a.succeeded, a.stalls, a.lapsed, a.user_id, a.order_at
    )`;
}

/**
 * `newest` of a row `t` taken in order: the newest time accepted for its user while that is
 * remembered, else the alert's own.
 */
function newestOf(users: string): string {
  return `CASE WHEN t.user_id IS NOT NULL THEN coalesce((
        SELECT greatest(n.newest_at, t.order_at) FROM ${users} AS n
        WHERE n.user_id = t.user_id AND n.expires_at > now()
      ), t.order_at)::float8 END AS newest`;
}

/**
 * The row a token leases now: `$1` id, `$2` token. Only an active row has a token (every write
 * that ends a lease clears it), so the token implies the state. The state is not named, so that
 * the primary key is the only index this can use: named, it let the planner pick the partial
 * index `alerts_lease` (smaller, so cheaper by its estimate), whose range `lease_until > now()`
 * holds every lease of every process, and entries of rows completed since the last vacuum; with
 * 200 alerts leased, a completion read 41 pages and filtered out 199 rows, against 4 pages.
 */
const FENCE = `id = $1::bigint AND lease_token = $2 AND lease_until > now()`;

/**
 * A housekeeping batch: deletes up to `limit` rows of `table` matching `where`, the oldest by
 * `order` first, skipping rows another sweep holds. The batch is chosen once, as an array (an
 * init plan), and deleted by its keys: as `key IN (subquery)`, with the table's statistics
 * counting it empty (taken while it was nearly so), the planner ran the subquery, its lock and its
 * limit again for every row of the table: a batch of 1,000 deleted all 5,000 failed alerts, in
 * 3.5 s and 12 million pages read (the time grows with the square of the rows).
 */
function sweep(table: string, key: string, where: string, order: string, limit: string): string {
  return `
      DELETE FROM ${table} WHERE ${key} = ANY(ARRAY(
        SELECT ${key} FROM ${table} WHERE ${where}
        ORDER BY ${order} LIMIT ${limit} FOR UPDATE SKIP LOCKED
      ))`;
}

/** The statements of one schema. `schema` is checked (a lower-case SQL name) before it gets here. */
export function statements(schema: string) {
  const alerts = `${schema}.alerts`;
  const identities = `${schema}.alert_identities`;
  /** The accepts' claim of identity `$1` (free or expired) for `$3` ms, as a CTE `claim`. */
  const claimIdentity = `claim AS (
        INSERT INTO ${identities} AS i (alert_id, expires_at)
        VALUES ($1, now() + $3::bigint ${MS})
        ON CONFLICT (alert_id) DO UPDATE SET expires_at = EXCLUDED.expires_at
          WHERE i.expires_at <= now()
        RETURNING alert_id
      )`;
  /** An accepted alert's `due_at`: now, or when `$4` puts it first, ahead of every alert due now. */
  const firstDueAt = `CASE WHEN $4::boolean
          THEN timestamptz 'epoch' - (now() - timestamptz 'epoch') ELSE now() END`;
  const users = `${schema}.alert_users`;
  const notify = (payload: string): string => `pg_notify('${channelOf(schema)}', ${payload})`;
  return {
    /**
     * `$1` schema: what exists of the store's tables. Read from the catalog tables with the
     * statement's snapshot, not through the catalog cache (`to_regnamespace`), which inside a
     * transaction that waited for the migration lock may still miss what another process committed.
     */
    probe: `SELECT
      EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1) AS has_schema,
      EXISTS (SELECT 1 FROM pg_catalog.pg_class AS c
        JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relname = 'migrations') AS has_migrations`,
    /** The version of the tables. */
    version: `SELECT coalesce(max(version), 0)::int AS version FROM ${schema}.migrations`,
    createSchema: `CREATE SCHEMA ${schema}`,
    createMigrations: `CREATE TABLE ${schema}.migrations (
      version integer PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`,
    /** `$1` version. */
    recordMigration: `INSERT INTO ${schema}.migrations (version) VALUES ($1)`,
    /**
     * `$1` alert id, `$2` the alert as JSON text, `$3` ttl ms, `$4` whether it goes first: then it
     * is due at the mirror image of now around the epoch, ahead of every alert due now, and the
     * newest such alert first (takes read in `due_at` order). Claims the identity (a free or
     * expired one), stores the alert and notifies the consumers, in one statement (one
     * transaction: both rows or neither; the notification is sent at its commit). A row when it
     * was accepted, none for a duplicate. A second accept of one identity waits on the primary
     * key for the first to commit, then sees it.
     */
    accept: `
      WITH ${claimIdentity}, job AS (
        INSERT INTO ${alerts} (alert_id, entry, due_at)
        SELECT alert_id, $2, ${firstDueAt}
        FROM claim RETURNING id
      )
      SELECT id, ${notify(`'0'`)} FROM job`,
    /**
     * `accept` in order per user, `$5` the user, `$6` the alert's time (ms): `accept_in_order`
     * (the claim, the user's newest time, the alert joining its user's line). A row when it was
     * accepted (`waiting`: it is its user's head), none for a duplicate.
     */
    acceptInOrder: `SELECT id, waiting FROM ${schema}.accept_in_order($1, $2, $3, $4, $5, $6::bigint)`,
    /**
     * `$1` token, `$2` lease ms. The oldest due alert, leased, read in the order of the partial
     * index `alerts_due` (a take reads a few index entries however many alerts wait). When none
     * was due: `due_in_ms`, how long until the next delayed alert falls due (null when none).
     */
    take: `
      WITH ${takeCtes(alerts, 1, 2)}
      SELECT t.*, CASE WHEN t.id IS NULL THEN (
        SELECT (extract(epoch FROM min(due_at) - now()) * 1000)::float8 FROM ${alerts}
        WHERE state = 'waiting' AND due_at > now()
      ) END AS due_in_ms
      FROM (SELECT 1) AS one LEFT JOIN taken AS t ON true`,
    /**
     * `take` in order per user: a plain take (every alert in `alerts_due` may start: a user's
     * head, or an alert accepted without order), with `newest`.
     */
    takeInOrder: `
      WITH ${takeCtes(alerts, 1, 2)}
      SELECT t.*, ${newestOf(users)}, CASE WHEN t.id IS NULL THEN (
        SELECT (extract(epoch FROM min(due_at) - now()) * 1000)::float8 FROM ${alerts}
        WHERE state = 'waiting' AND due_at > now()
      ) END AS due_in_ms
      FROM (SELECT 1) AS one LEFT JOIN taken AS t ON true`,
    /**
     * `completeAndTake` in order per user, `$5` whether the take may go on with the completed
     * alert's user (`complete_and_take_in_order`). `released`: the user's next alert was moved up
     * to wait; `followed`: it is the alert taken.
     */
    completeAndTakeInOrder: `SELECT * FROM ${schema}.complete_and_take_in_order(
      $1::bigint, $2, $3, $4::bigint, $5::boolean)`,
    /**
     * `$1` id, `$2` token, `$3` next token, `$4` lease ms: completes, and takes the next alert.
     * The completion runs first (`takeCtes`' `after`): a take's scan can lock rows it does not
     * take and keep them locked until its end (a row another take had just leased, whose
     * newer version it locks, in READ COMMITTED, even with SKIP LOCKED), among them the row
     * another process is about to complete. Taking first, a statement held the row it took
     * while it waited for its own; two such statements waited for each other, until PostgreSQL
     * cancelled one after `deadlock_timeout` (3 times in 360,000 statements with 20 connections
     * completing and taking in a loop; not once in 660,000 since).
     */
    completeAndTake: `
      WITH done AS (
        DELETE FROM ${alerts} WHERE ${FENCE} RETURNING id
      ), ${takeCtes(alerts, 3, 4, 'done')}
      SELECT (SELECT count(*) FROM done)::int AS completed, t.*
      FROM (SELECT 1) AS one LEFT JOIN taken AS t ON true`,
    /**
     * `$1` id, `$2` token. The row goes; the identity stays until it expires. The head of a
     * user's line moves the user's next alert up (`advance`). A row when it was completed:
     * `released`, whether an alert of its user was moved up to wait.
     */
    complete: `
      WITH done AS (DELETE FROM ${alerts} WHERE ${FENCE} RETURNING id, user_id)
      SELECT user_id IS NOT NULL AND ${schema}.advance(user_id, id, NULL, 0, true) IS NOT NULL
        AS released
      FROM done`,
    /** `$1` id, `$2` token, `$3` lease ms, `$4` stalls (null: unchanged, `lapsed` kept). */
    extend: `
      UPDATE ${alerts}
      SET lease_until = now() + $3::bigint ${MS},
        stalls = coalesce($4::int, stalls), lapsed = lapsed AND $4::int IS NULL
      WHERE ${FENCE}`,
    /**
     * `$1` id, `$2` token, `$3` delay ms, `$4` tries, `$5` succeeded, `$6` error message. Notifies
     * the consumers with the delay (a wake-up now, or a time to wake up at).
     */
    scheduleRetry: `
      WITH done AS (
        UPDATE ${alerts}
        SET state = 'waiting', due_at = now() + $3::bigint ${MS}, tries = $4, succeeded = $5,
          error = $6, lapsed = false, lease_token = NULL, lease_until = NULL
        WHERE ${FENCE}
        RETURNING id
      )
      SELECT id, ${notify('($3::bigint)::text')} FROM done`,
    /**
     * `$1` id, `$2` token, `$3` tries, `$4` succeeded, `$5` error message. A failed alert is out
     * of its user's line (put back, it joins it again): the user's next alert moves up. A row when
     * it was written: `released`, whether an alert of its user was moved up to wait.
     */
    fail: `
      WITH failed AS (
        UPDATE ${alerts}
        SET state = 'failed', failed_at = now(), tries = $3, succeeded = $4, error = $5,
          lapsed = false, lease_token = NULL, lease_until = NULL
        WHERE ${FENCE}
        RETURNING id, user_id
      )
        SELECT user_id IS NOT NULL AND ${schema}.advance(user_id, id, NULL, 0, true) IS NOT NULL
        AS released
      FROM failed`,
    /** Puts back every alert whose lease expired, marked lapsed; notifies when there were any. */
    reclaim: `
      WITH back AS (
        UPDATE ${alerts}
        SET state = 'waiting', lapsed = true, lease_token = NULL, lease_until = NULL
        WHERE state = 'active' AND lease_until <= now()
        RETURNING id
      )
      SELECT count(*)::int AS reclaimed,
        CASE WHEN count(*) > 0 THEN ${notify(`'0'`)}::text END AS notified
      FROM back`,
    /** `$1` limit, `$2` offset: newest first. */
    failed: `
      SELECT id, entry, error, succeeded, tries, failed_at FROM ${alerts}
      WHERE state = 'failed'
      ORDER BY failed_at DESC, id DESC
      LIMIT $1 OFFSET $2`,
    /** `$1` job id: tries and stalls to 0, lapsed cleared, the record kept. */
    retryById: `SELECT ${schema}.put_back(ARRAY[$1::bigint]) AS retried`,
    /** `$1` alert identity. */
    retryByAlert: `SELECT ${schema}.put_back(ARRAY(
      SELECT id FROM ${alerts} WHERE state = 'failed' AND alert_id = $1)) AS retried`,
    /**
     * Every alert failed now (one statement: a snapshot). The rows are locked in the order of
     * their ids, so that retry-alls at once wait for each other instead of deadlocking; a row
     * another one put back meanwhile is skipped (its state is checked again once it is locked),
     * also when it failed again since the statement began (a failure after the snapshot).
     */
    retryAll: `SELECT ${schema}.put_back(ARRAY(
      SELECT id FROM ${alerts} WHERE state = 'failed' AND failed_at <= now())) AS retried`,
    /**
     * Counts by state. `completed`: identities still remembered whose alert's row is gone (a
     * completed alert keeps only its identity).
     */
    counts: `
      SELECT
        count(*) FILTER (WHERE state IN ('waiting', 'queued') AND due_at <= now())::int AS waiting,
        count(*) FILTER (WHERE state = 'active')::int AS active,
        count(*) FILTER (WHERE state = 'waiting' AND due_at > now())::int AS delayed,
        count(*) FILTER (WHERE state = 'failed')::int AS failed,
        (SELECT count(*) FROM ${identities} AS i WHERE i.expires_at > now()
          AND NOT EXISTS (SELECT 1 FROM ${alerts} AS a WHERE a.alert_id = i.alert_id))::int
          AS completed
      FROM ${alerts}`,
    depth: `SELECT count(*)::int AS depth FROM ${alerts} WHERE state IN ('waiting', 'queued')`,
    /** How long until the next delayed alert falls due, in ms (null when none is delayed). */
    nextDue: `
      SELECT (extract(epoch FROM min(due_at) - now()) * 1000)::float8 AS due_in_ms
      FROM ${alerts} WHERE state = 'waiting' AND due_at > now()`,
    /** `$1` batch size: deletes up to that many expired identities. */
    sweepIdentities: sweep(identities, 'alert_id', 'expires_at <= now()', 'expires_at', '$1'),
    /** `$1` batch size: deletes up to that many users whose newest time expired. */
    sweepUsers: sweep(users, 'user_id', 'expires_at <= now() AND head IS NULL', 'expires_at', '$1'),
    /** `$1` ms a failed alert is kept, `$2` batch size. */
    sweepFailed: sweep(
      alerts,
      'id',
      `state = 'failed' AND failed_at <= now() - $1::bigint ${MS}`,
      'failed_at',
      '$2',
    ),
    /** Whether this role can write the tables, and whether the session can write at all. */
    writable: `
      SELECT
        has_schema_privilege('${schema}', 'USAGE')
        AND has_table_privilege('${alerts}', 'SELECT')
        AND has_table_privilege('${alerts}', 'INSERT')
        AND has_table_privilege('${alerts}', 'UPDATE')
        AND has_table_privilege('${alerts}', 'DELETE')
        AND has_table_privilege('${identities}', 'SELECT')
        AND has_table_privilege('${identities}', 'INSERT')
        AND has_table_privilege('${identities}', 'UPDATE')
        AND has_table_privilege('${identities}', 'DELETE')
        AND has_table_privilege('${users}', 'SELECT')
        AND has_table_privilege('${users}', 'INSERT')
        AND has_table_privilege('${users}', 'UPDATE')
        AND has_table_privilege('${users}', 'DELETE') AS granted,
        current_setting('transaction_read_only') = 'on' AS read_only`,
  };
}

/** The statements of a schema, by name. */
export type Statements = ReturnType<typeof statements>;
