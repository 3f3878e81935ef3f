import type { D1Database } from './bindings.js';

// The D1 tables, created together on first use of any (idempotent, safe from several isolates):
// the alert identities claimed for 72 h (shared de-duplication, both workers), queue mode's
// failed alerts, the claims of the retries under way, and queue mode's order per user (each
// user's line of alerts, and the user's newest time and holder: d1-order.ts). Together, so that
// the failed table is there to query from the first alert on, whatever failed or not.

const SCHEMA = [
  'CREATE TABLE IF NOT EXISTS churn_risk_identities(id TEXT PRIMARY KEY,expires_at INTEGER NOT NULL)',
  'CREATE INDEX IF NOT EXISTS churn_risk_identities_expiry ON churn_risk_identities(expires_at)',
  'CREATE TABLE IF NOT EXISTS churn_risk_failed(id TEXT PRIMARY KEY,alert_id TEXT NOT NULL,' +
    'entry TEXT NOT NULL,succeeded TEXT NOT NULL,tries INTEGER NOT NULL,error TEXT NOT NULL,' +
    'failed_at INTEGER NOT NULL)',
  'CREATE INDEX IF NOT EXISTS churn_risk_failed_order ON churn_risk_failed(failed_at,id)',
  // A retry's claim of a failed alert until it has been sent (d1-tables.ts).
  'CREATE TABLE IF NOT EXISTS churn_risk_failed_claims(id TEXT PRIMARY KEY,until INTEGER NOT NULL)',
  // Order per user (d1-order.ts): an alert in its user's line, until done.
  'CREATE TABLE IF NOT EXISTS churn_risk_user_alerts(id TEXT PRIMARY KEY,user_id TEXT NOT NULL,' +
    'at INTEGER NOT NULL,done INTEGER NOT NULL,expires_at INTEGER NOT NULL)',
  'CREATE INDEX IF NOT EXISTS churn_risk_user_alerts_line ON churn_risk_user_alerts(user_id,done,at)',
  'CREATE INDEX IF NOT EXISTS churn_risk_user_alerts_expiry ON churn_risk_user_alerts(expires_at)',
  // A user's newest time accepted (until expires_at), and the alert that holds it (until held_until).
  'CREATE TABLE IF NOT EXISTS churn_risk_users(user_id TEXT PRIMARY KEY,newest INTEGER NOT NULL,' +
    'expires_at INTEGER NOT NULL,holder TEXT,held_until INTEGER)',
];

/** The schema, once per database and isolate; a failure is not kept, so the next call tries again. */
const ready = new WeakMap<D1Database, Promise<void>>();
export function ensureSchema(db: D1Database): Promise<void> {
  let done = ready.get(db);
  if (done === undefined) {
    done = db.batch(SCHEMA.map((sql) => db.prepare(sql))).then(() => undefined);
    ready.set(db, done);
    done.catch(() => ready.delete(db));
  }
  return done;
}
