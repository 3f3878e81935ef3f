/**
 * The parts of the Workers bindings that queue mode uses, written out so that the types of
 * `@cloudflare/workers-types` (`Queue`, `MessageBatch`, `D1Database`) fit them, and so that tests
 * can hand in stand-ins.
 */

/** A Queue's producer binding (`[[queues.producers]]` in wrangler.toml; `Queue` in workers-types). */
export interface QueueProducer {
  /** Sends one message; `delaySeconds` holds it back that long (at most 43,200, 12 hours). */
  send(body: unknown, options?: { delaySeconds?: number }): Promise<unknown>;
}

/** One message of a batch the platform delivers to the consumer (`Message` in workers-types). */
export interface QueueMessage {
  /** The platform's id of the message. */
  readonly id: string;
  /** What was sent (queue mode: the alert and its record of tries). */
  readonly body: unknown;
  /** Deliveries of this message so far, this one included (1 for the first). */
  readonly attempts: number;
  /** Removes the message from the queue. */
  ack(): void;
  /** Delivers the message again, unchanged, after `delaySeconds`. */
  retry(options?: { delaySeconds?: number }): void;
}

/** What the platform hands the consumer (`MessageBatch` in workers-types). */
export interface QueueBatch {
  /** The name of the queue the messages come from (a dead-letter queue has its own). */
  readonly queue: string;
  /** The messages of the batch. */
  readonly messages: readonly QueueMessage[];
}

/** A prepared D1 statement (`D1PreparedStatement` in workers-types). */
export interface D1Statement {
  /** Binds the statement's `?` parameters, in order. */
  bind(...values: unknown[]): D1Statement;
  /** Runs it and resolves with its first row, or `null`. */
  first<T = Record<string, unknown>>(): Promise<T | null>;
  /** Runs it (a write). */
  run(): Promise<unknown>;
  /** Runs it and resolves with every row. */
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- D1's own signature
  all<T = Record<string, unknown>>(): Promise<{ results: T[] }>;
}

/** A D1 database binding (`[[d1_databases]]` in wrangler.toml; `D1Database` in workers-types). */
export interface D1Database {
  /** Prepares a SQL statement. */
  prepare(query: string): D1Statement;
  /** Runs statements in one transaction. */
  batch(statements: D1Statement[]): Promise<unknown[]>;
}
