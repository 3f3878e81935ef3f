import pg from 'pg';
import { clientConfig, CONNECT_TIMEOUT_MS } from './connection.js';
import type { PostgresConnection } from './options.js';

/**
 * How a waiting take learns that work may be there: a wake-up now (an alert accepted, a retry due
 * now, a reconnect of the listener), or a time to look again (a retry due later). A counter lets
 * a take see a wake-up that came while its query ran, so none is missed.
 */
export class WakeUp {
  /** Wake-ups so far. */
  count = 0;
  #waiter: { resolve: () => void; timer: ReturnType<typeof setTimeout>; until: number } | undefined;

  /** Work may be due now: a sleeping take looks at once. */
  now(): void {
    this.count++;
    const waiter = this.#waiter;
    if (waiter === undefined) return;
    this.#waiter = undefined;
    clearTimeout(waiter.timer);
    waiter.resolve();
  }

  /** Work falls due in `ms`: a sleeping take that would sleep longer looks then. */
  in(ms: number): void {
    if (ms <= 0) {
      this.now();
      return;
    }
    const waiter = this.#waiter;
    if (waiter === undefined || waiter.until <= Date.now() + ms) return;
    clearTimeout(waiter.timer);
    waiter.until = Date.now() + ms;
    waiter.timer = setTimeout(() => {
      this.#end();
    }, ms);
  }

  /** Whether a take sleeps now. */
  sleeping(): boolean {
    return this.#waiter !== undefined;
  }

  /** Sleeps `ms` at most: ends at the next wake-up, or earlier when `in` says so. */
  sleep(ms: number): Promise<void> {
    this.#end(); // one sleeper at a time
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.#end();
      }, ms);
      this.#waiter = { resolve, timer, until: Date.now() + ms };
    });
  }

  #end(): void {
    const waiter = this.#waiter;
    if (waiter === undefined) return;
    this.#waiter = undefined;
    clearTimeout(waiter.timer);
    waiter.resolve();
  }
}

const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5_000;

/**
 * The one `LISTEN` connection of a consuming process: a dedicated `pg.Client` (not one of the
 * pool's) that turns each notification of the schema's channel into a wake-up (`'0'`: work is due
 * now; a number of ms: a retry falls due then). When it drops (the server restarted, an admin
 * ended it) it reconnects with a growing backoff, and wakes the take once it listens again (a
 * notification sent meanwhile was lost). The poll of the waiting take covers the gap.
 */
export class Listener {
  readonly #config: pg.ClientConfig;
  readonly #channel: string;
  readonly #wakeUp: WakeUp;
  #client: pg.Client | undefined;
  #stopped = false;
  #backoffMs = FIRST_BACKOFF_MS;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #connecting: Promise<void> | undefined;

  constructor(connection: PostgresConnection, channel: string, wakeUp: WakeUp) {
    const config = clientConfig(connection);
    config.connectionTimeoutMillis ??= CONNECT_TIMEOUT_MS;
    config.application_name ??= 'churn-risk';
    config.keepAlive ??= true;
    this.#config = config;
    this.#channel = channel;
    this.#wakeUp = wakeUp;
  }

  /** Starts listening (in the background; a failure is retried with backoff). */
  start(): void {
    if (this.#stopped || this.#client !== undefined || this.#connecting !== undefined) return;
    this.#connecting = this.#connect().finally(() => {
      this.#connecting = undefined;
    });
  }

  async #connect(): Promise<void> {
    const client = new pg.Client(this.#config);
    const state = { dropped: false };
    const drop = (): void => {
      if (state.dropped) return;
      state.dropped = true;
      if (this.#client === client) this.#client = undefined;
      client.end().catch(() => undefined);
      this.#later();
    };
    client.on('error', drop);
    client.on('end', drop);
    client.on('notification', (message) => {
      const ms = Number(message.payload ?? '0');
      if (Number.isFinite(ms) && ms > 0) this.#wakeUp.in(ms);
      else this.#wakeUp.now();
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${this.#channel}"`);
    } catch {
      drop();
      return;
    }
    if (this.#isStopped() || state.dropped) {
      client.removeListener('end', drop);
      await client.end().catch(() => undefined);
      return;
    }
    this.#client = client;
    this.#backoffMs = FIRST_BACKOFF_MS;
    this.#wakeUp.now(); // what was notified while it was not listening is looked for now
  }

  /** Whether `stop` was called (read through a call: it changes during the awaits). */
  #isStopped(): boolean {
    return this.#stopped;
  }

  /** Connects again after the backoff, which doubles up to 5 s. */
  #later(): void {
    if (this.#stopped || this.#retry !== undefined) return;
    const wait = this.#backoffMs;
    this.#backoffMs = Math.min(this.#backoffMs * 2, MAX_BACKOFF_MS);
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.start();
    }, wait);
    this.#retry.unref();
  }

  /** Stops listening and closes the connection. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retry);
    await this.#connecting;
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
    }
  }
}
