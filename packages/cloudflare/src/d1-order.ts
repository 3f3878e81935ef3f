import { PushOrder, type AlertRecord, type UserOrderKey } from '@churn-risk/core/store';
import type { D1Database, D1Statement } from './bindings.js';
import { ensureSchema } from './d1-schema.js';

// Queue mode's order per user (`createReceiver({ order: 'per-user' })`) in D1: each user's line of
// alerts (`churn_risk_user_alerts`: user, time, done) and the user's row (`churn_risk_users`: the
// newest time accepted, and the alert that holds the user, until when). Tables in d1-schema.ts.

/**
 * How long a claim holds a user without news of its alert (ms): the longest a consumer may run
 * (Workers give a queue consumer 15 minutes of wall time), so that a consumer that died holds the
 * user no longer than that. Its message comes back first (it still holds its user); a hold that
 * lapsed no longer blocks the user's other alerts. A retry extends the hold by its delay.
 */
export const HOLD_MS = 15 * 60_000;

/**
 * The shortest wait of an alert whose user is held by a running alert, or which an older alert
 * of its user waits before (cloudflare-queue.ts doubles it with each postponement in a row).
 */
export const POSTPONE_MS = 1_000;

/**
 * Whether alert `?1` of user `?2`, triggered at `?3`, may start at `?4` (now): no alert of the
 * user is older in its line and not done, except one whose hold lapsed (its consumer died: it no
 * longer blocks). An alert's identity is its user and time, so two alerts of a user never tie.
 */
const NO_OLDER_WAITING =
  'NOT EXISTS(SELECT 1 FROM churn_risk_user_alerts WHERE user_id=?2 AND done=0 AND ' +
  'expires_at>?4 AND at<?3 AND id IS NOT(SELECT holder FROM churn_risk_users WHERE ' +
  'user_id=?2 AND held_until<=?4))';

/**
 * The claim, one statement: the user's row is written with this alert as its holder when the
 * alert holds it already (a retry, a redelivery: it goes first), or when no other alert holds it
 * (or that one's hold lapsed) and no older alert of the user waits; it answers the newest time
 * accepted for the user. A user without a row (accepted before order per user, or swept) gets one.
 */
const CLAIM =
  'INSERT INTO churn_risk_users AS u(user_id,newest,expires_at,holder,held_until)' +
  'SELECT ?2,?3,?4,?1,?5 WHERE EXISTS(SELECT 1 FROM churn_risk_users WHERE user_id=?2 AND ' +
  `holder=?1)OR ${NO_OLDER_WAITING} ON CONFLICT(user_id)DO UPDATE SET holder=?1,held_until=?5 ` +
  'WHERE u.holder IS NULL OR u.holder=?1 OR u.held_until<=?4 RETURNING newest';

/** A statement's result in a D1 batch. */
interface Rows<T> {
  results?: T[];
}

/**
 * The order per user of queue mode, on one D1 database shared by every isolate. `send` records an
 * alert in its user's line (`recordStatements`, in the batch that claims its identity); `claim`
 * holds the user in one conditional write; `release` marks the alert done and frees the user.
 */
export class D1UserOrder extends PushOrder {
  readonly #db: D1Database;
  readonly #now: () => number;
  /**
   * The delivered messages whose claim in this isolate held their user: a retry of one extends
   * the hold (`holdFor`).
   */
  readonly holding = new WeakSet<AlertRecord<'delivered'>>();
  /** Whether this isolate recorded or claimed anything (only then are its tables swept). */
  used = false;

  constructor(db: D1Database, now: () => number = Date.now) {
    super();
    this.#db = db;
    this.#now = now;
  }

  /**
   * The statements that record alert `id` (user and time `key`) in its user's line and raise the
   * user's newest time, kept until `expiresAt`: only when the identity row of `id` was written
   * by the batch they run in (`expires_at = expiresAt`), after it. A duplicate changes nothing.
   */
  recordStatements(id: string, key: UserOrderKey, expiresAt: number, now: number): D1Statement[] {
    this.used = true;
    const claimed = 'EXISTS(SELECT 1 FROM churn_risk_identities WHERE id=?1 AND expires_at=?4)';
    return [
      this.#db
        .prepare(
          'INSERT INTO churn_risk_user_alerts(id,user_id,at,done,expires_at)SELECT ?1,?2,?3,0,?4 ' +
            `WHERE ${claimed} ON CONFLICT(id)DO UPDATE SET at=?3,done=0,expires_at=?4`,
        )
        .bind(id, key.user, key.at, expiresAt),
      this.#db
        .prepare(
          'INSERT INTO churn_risk_users AS u(user_id,newest,expires_at)SELECT ?2,?3,?4 WHERE ' +
            `${claimed} ON CONFLICT(user_id)DO UPDATE SET ` +
            'newest=IIF(u.expires_at<=?5,?3,MAX(u.newest,?3)),expires_at=MAX(u.expires_at,?4)',
        )
        .bind(id, key.user, key.at, expiresAt, now),
    ];
  }

  /** The statement that takes alert `id` out of its user's line (its send failed). */
  forgetStatement(id: string): D1Statement {
    return this.#db.prepare('DELETE FROM churn_risk_user_alerts WHERE id=?1').bind(id);
  }

  async claim(
    message: AlertRecord<'delivered'>,
    key: UserOrderKey,
  ): Promise<{ readonly newest: number } | { readonly waitMs: number }> {
    this.used = true;
    await ensureSchema(this.#db);
    const now = this.#now();
    // The claim, and in the same round trip the user's holder: a claim that did not go through
    // waits for the holder's retry when one is due later (its hold lasts HOLD_MS past that).
    const [claimed, user] = (await this.#db.batch([
      this.#db.prepare(CLAIM).bind(message.id, key.user, key.at, now, now + HOLD_MS),
      this.#db.prepare('SELECT held_until FROM churn_risk_users WHERE user_id=?1').bind(key.user),
    ])) as [Rows<{ newest: number }>, Rows<{ held_until: number | null }>];
    const [row] = claimed.results ?? [];
    if (row !== undefined) {
      this.holding.add(message);
      return { newest: row.newest };
    }
    const due = (user.results?.[0]?.held_until ?? 0) - HOLD_MS;
    return { waitMs: Math.max(POSTPONE_MS, due - now) };
  }

  /** Keeps alert `message` holding its user `delayMs` (its retry's delay) plus `HOLD_MS`. */
  async holdFor(message: AlertRecord<'delivered'>, delayMs: number): Promise<void> {
    await this.#db
      .prepare('UPDATE churn_risk_users SET held_until=?3 WHERE user_id=?2 AND holder=?1')
      .bind(message.id, message.alert.userId, this.#now() + delayMs + HOLD_MS)
      .run();
  }

  async release(message: AlertRecord<'delivered'>, key: UserOrderKey): Promise<void> {
    this.holding.delete(message);
    await this.#db.batch([
      this.#db.prepare('UPDATE churn_risk_user_alerts SET done=1 WHERE id=?1').bind(message.id),
      this.#db
        .prepare(
          'UPDATE churn_risk_users SET holder=NULL,held_until=NULL WHERE user_id=?2 AND holder=?1',
        )
        .bind(message.id, key.user),
    ]);
  }

  /**
   * The statements that delete, at `now`, the expired lines' rows and the users whose newest time
   * expired and who are not held (run with the identities' sweep, `D1Identities.sweep`).
   */
  sweepStatements(now: number): D1Statement[] {
    return [
      this.#db.prepare('DELETE FROM churn_risk_user_alerts WHERE expires_at<=?1').bind(now),
      this.#db
        .prepare(
          'DELETE FROM churn_risk_users WHERE expires_at<=?1 AND(holder IS NULL OR held_until<=?1)',
        )
        .bind(now),
    ];
  }
}
