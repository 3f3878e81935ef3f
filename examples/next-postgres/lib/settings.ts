import { hostname } from 'node:os';

/** Which durable queue the app uses: `CHURN_RISK_QUEUE`, `postgres` (default) or `redis`. */
export type QueueKind = 'postgres' | 'redis';

/** The app's settings, read from the environment at request time (`next build` has none of them). */
export interface Settings {
  /** `CHURN_RISK_WEBHOOK_SECRET`: the webhook signing secret. Required. */
  secret: string;
  queue: QueueKind;
  /** `DATABASE_URL` (Postgres) or `REDIS_URL` (Redis): where the queue and the run log live. */
  url: string;
  /** `CHURN_RISK_LEASE_MS`: how long a run holds an alert before a sweep may take it over. */
  leaseMs: number;
  /** `CHURN_RISK_KEEP_ALIVE_BUDGET_MS`: how long `after()` runs due alerts after a `202`. */
  keepAliveBudgetMs: number;
  /** `CHURN_RISK_SWEEP_BUDGET_MS`: how long one cron sweep runs. */
  sweepBudgetMs: number;
  /** `CHURN_RISK_EXAMPLE_INSTANCE`: this server's name in the run log. Default `host:pid`. */
  instance: string;
  /** `CHURN_RISK_EXAMPLE_SLOW_MS`: how long a `slow_` user's alert takes. Default 5,000. */
  slowMs: number;
}

function required(name: string, what: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`Set ${name} to ${what}.`);
  return value;
}

function whole(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new Error(`${name} must be a whole number of milliseconds of at least 1.`);
  }
  return value;
}

function queueKind(): QueueKind {
  const raw = process.env.CHURN_RISK_QUEUE ?? 'postgres';
  if (raw !== 'postgres' && raw !== 'redis') {
    throw new Error('CHURN_RISK_QUEUE must be postgres or redis.');
  }
  return raw;
}

/** Reads the settings; throws naming the first missing or malformed variable. */
export function readSettings(): Settings {
  const queue = queueKind();
  return {
    secret: required('CHURN_RISK_WEBHOOK_SECRET', 'the webhook signing secret'),
    queue,
    url:
      queue === 'postgres'
        ? required('DATABASE_URL', 'a postgres:// URL')
        : required('REDIS_URL', 'a redis:// URL'),
    leaseMs: whole('CHURN_RISK_LEASE_MS', 30_000),
    // A little under the routes' maxDuration (60 s), so the last run ends inside the function.
    keepAliveBudgetMs: whole('CHURN_RISK_KEEP_ALIVE_BUDGET_MS', 50_000),
    sweepBudgetMs: whole('CHURN_RISK_SWEEP_BUDGET_MS', 50_000),
    instance: process.env.CHURN_RISK_EXAMPLE_INSTANCE ?? `${hostname()}:${String(process.pid)}`,
    slowMs: whole('CHURN_RISK_EXAMPLE_SLOW_MS', 5_000),
  };
}
