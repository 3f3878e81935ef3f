import type { DedupeStore } from '@churn-risk/core/store';
import type { D1Database, D1Statement } from './bindings.js';
import { ensureSchema } from './d1-schema.js';

// The alert identities claimed for 72 h in D1 (de-duplication shared by every isolate): used by
// both workers (`dedupe: (env) => env.CHURN_RISK_DB`), so it imports no queue-mode code.

/**
 * The identity claims: `claim` records `id` for `ttlMs` unless a live claim exists, in one
 * statement (an upsert that only overwrites an expired claim), so two isolates claiming at once
 * get one `true`.
 */
export class D1Identities implements DedupeStore {
  readonly #db: D1Database;
  readonly #now: () => number;
  #sweptAt = 0;

  constructor(db: D1Database, now: () => number = Date.now) {
    this.#db = db;
    this.#now = now;
  }

  /**
   * Claims `id` for `ttlMs`. `also` gives statements to run in the same batch (one transaction,
   * after the claim), given the claim's expiry and the time: queue mode's order per user records
   * the alert in its user's line there, on condition that the claim was written.
   */
  async claim(
    id: string,
    ttlMs: number,
    also?: (expiresAt: number, now: number) => D1Statement[],
  ): Promise<boolean> {
    await ensureSchema(this.#db);
    const now = this.#now();
    const claim = this.#db
      .prepare(
        'INSERT INTO churn_risk_identities(id,expires_at)VALUES(?1,?2)' +
          'ON CONFLICT(id)DO UPDATE SET expires_at=excluded.expires_at ' +
          'WHERE churn_risk_identities.expires_at<=?3 RETURNING id',
      )
      .bind(id, now + ttlMs, now);
    if (also === undefined) return (await claim.first()) !== null;
    const [answer] = (await this.#db.batch([claim, ...also(now + ttlMs, now)])) as [
      { results?: unknown[] } | undefined,
    ];
    return (answer?.results?.length ?? 0) > 0;
  }

  /** Releases the claim of `id`, with `also` in the same batch. */
  async release(id: string, also: D1Statement[] = []): Promise<void> {
    const release = this.#db.prepare('DELETE FROM churn_risk_identities WHERE id=?1').bind(id);
    if (also.length === 0) await release.run();
    else await this.#db.batch([release, ...also]);
  }

  /**
   * Deletes expired claims, at most every ten minutes per isolate, with `also(now)` in the same
   * batch (queue mode's order per user deletes its expired rows there).
   */
  async sweep(also?: (now: number) => D1Statement[]): Promise<void> {
    const now = this.#now();
    if (now - this.#sweptAt < 600_000) return;
    this.#sweptAt = now;
    await ensureSchema(this.#db);
    const sweep = this.#db.prepare('DELETE FROM churn_risk_identities WHERE expires_at<=?1');
    await this.#db.batch([sweep.bind(now), ...(also?.(now) ?? [])]);
  }

  async health(): Promise<void> {
    await this.#db.prepare('SELECT 1').first();
  }
}
