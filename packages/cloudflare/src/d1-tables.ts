import {
  resolveFailedListOptions,
  type AlertRecord,
  type FailedListOptions,
} from '@churn-risk/core/store';
import type { D1Database, D1Statement, QueueProducer } from './bindings.js';
import { ensureSchema } from './d1-schema.js';
import { messageOf } from './queue-message.js';

// Queue mode's failed store: a D1 table created on first use (idempotent, safe from several
// isolates, with the identities' table: d1-schema.ts). The identities are in d1-identities.ts.

/**
 * How long a retry's claim of a failed alert holds (ms): the bound on its send. A claim older than
 * this is taken to be of an isolate that died, and another retry may claim the alert.
 */
const CLAIM_MS = 60_000;

interface FailedRow {
  id: string;
  alert_id: string;
  entry: string;
  succeeded: string;
  tries: number;
  error: string;
  failed_at: number;
}

function failedRecord(row: FailedRow): AlertRecord<'failed'> {
  return {
    ...(JSON.parse(row.entry) as AlertRecord<'accepted'>),
    jobId: row.id,
    tries: row.tries,
    succeeded: JSON.parse(row.succeeded) as string[],
    error: row.error,
    failedAt: row.failed_at,
  };
}

/** What `add` stores of a failed alert. */
export interface FailedRecord {
  entry: AlertRecord<'accepted'>;
  succeeded: readonly string[];
  tries: number;
  error: Error;
}

/**
 * Queue mode's failed store: a D1 table of the alerts whose last try failed (or that the platform
 * dead-lettered), kept until they are retried. `retry` sends the alert to the queue again (tries
 * reset, the record of succeeded handlers kept), then deletes its row; each row is claimed first,
 * so that retries at once (in any isolates) send it once.
 */
export interface FailedStore {
  /** The failed alerts, newest first (default `limit` 50, `offset` 0). */
  failed(options?: FailedListOptions): Promise<AlertRecord<'failed'>[]>;
  /**
   * Sends one back to the queue, by its alert identity (`id`) or its `jobId`; a `TypeError` when
   * unknown, or no longer failed (another retry sent it).
   */
  retry(id: string): Promise<void>;
  /**
   * Sends back every alert failed when it is called, once each, skipping one that another retry
   * sent meanwhile; resolves to how many it sent.
   */
  retryAll(): Promise<number>;
  /** How many alerts the table holds. */
  count(): Promise<number>;
}

export class D1FailedStore implements FailedStore {
  readonly #db: D1Database;
  readonly #producer: QueueProducer;
  readonly #now: () => number;

  constructor(db: D1Database, producer: QueueProducer, now: () => number = Date.now) {
    this.#db = db;
    this.#producer = producer;
    this.#now = now;
  }

  /** Stores a failed alert (a fresh row id, so that a retried alert that fails again is new). */
  async add(record: FailedRecord): Promise<void> {
    await ensureSchema(this.#db);
    await this.#db
      .prepare(
        'INSERT INTO churn_risk_failed(id,alert_id,entry,succeeded,tries,error,failed_at)' +
          'VALUES(?1,?2,?3,?4,?5,?6,?7)',
      )
      .bind(
        crypto.randomUUID(),
        record.entry.id,
        JSON.stringify(record.entry),
        JSON.stringify(record.succeeded),
        record.tries,
        `${record.error.name}: ${record.error.message}`,
        this.#now(),
      )
      .run();
  }

  async failed(options?: FailedListOptions): Promise<AlertRecord<'failed'>[]> {
    const { limit, offset } = resolveFailedListOptions(options);
    await ensureSchema(this.#db);
    const { results } = await this.#db
      .prepare(
        'SELECT * FROM churn_risk_failed ORDER BY failed_at DESC,rowid DESC LIMIT ?1 OFFSET ?2',
      )
      .bind(limit, offset)
      .all<FailedRow>();
    return results.map(failedRecord);
  }

  async retry(id: string): Promise<void> {
    await ensureSchema(this.#db);
    const row = await this.#db
      .prepare(
        'SELECT id FROM churn_risk_failed WHERE id=?1 OR alert_id=?1 ORDER BY failed_at LIMIT 1',
      )
      .bind(id)
      .first<{ id: string }>();
    if (row === null || !(await this.#resend(row.id))) {
      throw new TypeError(`No failed alert has the id ${id}.`);
    }
  }

  async retryAll(): Promise<number> {
    await ensureSchema(this.#db);
    // The rows now (a snapshot): an alert that fails again is a new row, not in it.
    const { results } = await this.#db
      .prepare('SELECT id FROM churn_risk_failed ORDER BY failed_at,id')
      .all<{ id: string }>();
    let retried = 0;
    for (const row of results) if (await this.#resend(row.id)) retried++;
    return retried;
  }

  async count(): Promise<number> {
    await ensureSchema(this.#db);
    const row = await this.#db
      .prepare('SELECT COUNT(*)AS n FROM churn_risk_failed')
      .first<{ n: number }>();
    return row?.n ?? 0;
  }

  /**
   * Sends failed alert `id` back to the queue, once: the row is claimed first, in one statement
   * (a claim of `churn_risk_failed_claims`, taken only while the row exists and no other retry's
   * claim holds it), so that retries at once, in any isolates, send it once; the others skip it
   * (false). Then it waits in its user's line again (order per user), it is sent, then the row
   * and the claim are deleted together. A failed send
   * releases the claim; a claim whose isolate died before it deleted the row expires after
   * `CLAIM_MS`, and the alert can be retried again (sent twice if the send had gone through,
   * never lost).
   */
  async #resend(id: string): Promise<boolean> {
    const now = this.#now();
    const claimed = await this.#db
      .prepare(
        'INSERT INTO churn_risk_failed_claims(id,until)' +
          'SELECT id,?2 FROM churn_risk_failed WHERE id=?1 ' +
          'ON CONFLICT(id)DO UPDATE SET until=excluded.until ' +
          'WHERE churn_risk_failed_claims.until<=?3 RETURNING id',
      )
      .bind(id, now + CLAIM_MS, now)
      .first<{ id: string }>();
    if (claimed === null) return false;
    const row = await this.#db
      .prepare('SELECT * FROM churn_risk_failed WHERE id=?1')
      .bind(id)
      .first<FailedRow>();
    const release = this.#db.prepare('DELETE FROM churn_risk_failed_claims WHERE id=?1').bind(id);
    if (row === null) {
      await release.run(); // retried and deleted by a claim that had expired
      return false;
    }
    // In order per user, the alert waits in its user's line again (a no-op for an alert that is
    // in none): its user's newer alerts wait for it, as they would for any older alert.
    const inLine = (done: 0 | 1): D1Statement =>
      this.#db
        .prepare('UPDATE churn_risk_user_alerts SET done=?2 WHERE id=?1')
        .bind(row.alert_id, done);
    try {
      await inLine(0).run();
      const entry = JSON.parse(row.entry) as AlertRecord<'accepted'>;
      const succeeded = JSON.parse(row.succeeded) as string[];
      await this.#producer.send(messageOf(entry, 0, succeeded));
    } catch (error) {
      await this.#db.batch([release, inLine(1)]).catch(() => undefined);
      throw error;
    }
    await this.#db.batch([
      this.#db.prepare('DELETE FROM churn_risk_failed WHERE id=?1').bind(id),
      release,
    ]);
    return true;
  }
}

/**
 * Queue mode's failed store, from the worker's bindings: to list and retry failed alerts from an
 * admin route or a scheduled handler of your own.
 *
 * @example
 * const store = createFailedStore(env.CHURN_RISK_DB, env.CHURN_RISK_ALERTS);
 * for (const failed of await store.failed({ limit: 20 })) console.log(failed.id, failed.error);
 * await store.retryAll();
 */
export function createFailedStore(db: D1Database, producer: QueueProducer): FailedStore {
  return new D1FailedStore(db, producer);
}
