import type { QueueBatch, QueueMessage, QueueProducer } from './bindings.js';

/**
 * Test support: Cloudflare Queues in memory, with the platform's rules as documented. `send`
 * copies the body (structured clone) and holds it `delaySeconds` (on the queues' own clock, which
 * `drain` moves on to the next due message instead of waiting); the consumer gets batches of
 * due messages; a message acked is gone, one retried (or left un-acked by a consumer that threw)
 * is delivered again with `attempts` + 1, and after `maxRetries` retries it moves to the
 * dead-letter queue (where `attempts` starts again at 1). A consumer that returns without acking
 * a message acks it implicitly, as the platform does.
 */
interface Stored {
  id: string;
  body: unknown;
  attempts: number;
  dueAt: number;
}

export interface QueueSettings {
  maxRetries?: number;
  deadLetterQueue?: string;
}

export type Consumer = (batch: QueueBatch) => Promise<void>;

export class MemoryQueues {
  readonly #queues = new Map<string, Stored[]>();
  readonly #settings: Record<string, QueueSettings>;
  #ids = 0;
  /** How far the queues' clock is ahead of `Date.now()`, in ms. */
  #skew = 0;
  /** Sends refused from now on (a Queues outage). */
  failSends = false;

  constructor(settings: Record<string, QueueSettings> = {}) {
    this.#settings = settings;
  }

  #queue(name: string): Stored[] {
    let queue = this.#queues.get(name);
    if (queue === undefined) this.#queues.set(name, (queue = []));
    return queue;
  }

  /** The messages waiting (due or not) in `name`. */
  size(name: string): number {
    return this.#queue(name).length;
  }

  producer(name: string): QueueProducer {
    return {
      send: (body, options) => {
        if (this.failSends) return Promise.reject(new Error('Queue send failed: unavailable'));
        const dueAt = this.#now() + (options?.delaySeconds ?? 0) * 1000;
        this.#queue(name).push({
          id: `m${String(++this.#ids)}`,
          body: structuredClone(body),
          attempts: 1,
          dueAt,
        });
        return Promise.resolve();
      },
    };
  }

  #now(): number {
    return Date.now() + this.#skew;
  }

  /**
   * Delivers the messages of `names` to the consumers (a batch to each in turn, as isolates) until
   * none is left; when none is due, the clock moves on to the next one.
   */
  async drain(names: readonly string[], consumers: readonly Consumer[]): Promise<void> {
    let turn = 0;
    for (;;) {
      const now = this.#now();
      const waiting = names.flatMap((name) => this.#queue(name));
      if (waiting.length === 0) return;
      const name = names.find((n) => this.#queue(n).some((m) => m.dueAt <= now));
      if (name === undefined) {
        this.#skew += Math.min(...waiting.map((m) => m.dueAt)) - now;
        continue;
      }
      const queue = this.#queue(name);
      const due = queue.filter((m) => m.dueAt <= now);
      this.#queues.set(
        name,
        queue.filter((m) => m.dueAt > now),
      );
      const consumer = consumers[turn++ % consumers.length] as Consumer;
      await this.#deliver(name, due, consumer);
    }
  }

  async #deliver(name: string, due: Stored[], consumer: Consumer): Promise<void> {
    const verdicts = new Map<Stored, { ack: true } | { delaySeconds: number }>();
    const messages: QueueMessage[] = due.map((stored) => ({
      id: stored.id,
      body: structuredClone(stored.body),
      attempts: stored.attempts,
      ack: () => void verdicts.set(stored, { ack: true }),
      retry: (options) => void verdicts.set(stored, { delaySeconds: options?.delaySeconds ?? 0 }),
    }));
    let threw = false;
    try {
      await consumer({ queue: name, messages });
    } catch {
      threw = true;
    }
    const settings = this.#settings[name] ?? {};
    for (const stored of due) {
      const verdict = verdicts.get(stored) ?? (threw ? { delaySeconds: 0 } : { ack: true });
      if ('ack' in verdict) continue;
      if (stored.attempts > (settings.maxRetries ?? 3)) {
        if (settings.deadLetterQueue !== undefined) {
          this.#queue(settings.deadLetterQueue).push({
            ...stored,
            attempts: 1,
            dueAt: this.#now(),
          });
        }
        continue;
      }
      this.#queue(name).push({
        ...stored,
        attempts: stored.attempts + 1,
        dueAt: this.#now() + verdict.delaySeconds * 1000,
      });
    }
  }
}
