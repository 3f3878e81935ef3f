import type {
  AcceptOptions,
  AcceptResult,
  AcceptedAlert,
  AlertProcessor,
  AlertRecord,
} from '../../queue-port/alert-queue.js';

/**
 * Settles like `promise`, or rejects with `Error("<message> within <ms> ms.")` once `ms` have
 * passed first (a late outcome of `promise` is dropped, never an unhandled rejection). It bounds
 * every accept of a durable queue (`enqueueTimeoutMs`). For store authors: an `AlertStore`'s
 * `health()` must answer even when its back end hangs.
 *
 * @example
 * await withTimeout(client.ping(), 2000, 'Redis did not answer PING');
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`${message} within ${ms} ms.`));
    }, ms);
  });
  // A late outcome of `promise` is dropped, never an unhandled rejection.
  promise.catch(() => undefined);
  return Promise.race([promise, timeout]).finally(() => {
    clearTimeout(timer);
  });
}

const ACCEPTED: AcceptedAlert = Object.freeze({ done: Promise.resolve() });

/**
 * What the two durable queues share, the pull-based one (`createDurableQueue`, alerts in an
 * `AlertStore`) and the push-based one (`createPushQueue`, alerts on a platform queue): an alert
 * is recorded outside this process before the `202`, within `enqueueTimeoutMs`; the receiver's
 * processing is attached once; nothing waits in this process (`queued` is 0), and `running`
 * counts the tries in flight here.
 */
export abstract class DurableQueueBase {
  readonly processesInline = false;
  readonly durable = true;
  abstract readonly kind: string;
  readonly #enqueueTimeoutMs: number;
  #processor: AlertProcessor | undefined;
  #running = 0;
  #closed = false;
  #invocationMode = false;

  protected constructor(enqueueTimeoutMs: number) {
    this.#enqueueTimeoutMs = enqueueTimeoutMs;
  }

  /** Records `entry` outside this process: `'duplicate'` when its identity was seen. */
  protected abstract record(
    entry: AlertRecord<'accepted'>,
    options: AcceptOptions | undefined,
  ): Promise<'accepted' | 'duplicate'>;

  /** The start of the error when `record` did not answer in time ("... within N ms."). */
  protected abstract readonly notRecorded: string;

  /** An alert was recorded (a queue that takes alerts may take it at once). */
  protected accepted(): void {
    // nothing by default
  }

  attach(processor: AlertProcessor, how?: { consume?: boolean | 'invocation' }): void {
    if (this.#processor !== undefined) throw new TypeError('This queue is already attached.');
    this.#processor = processor;
    this.#invocationMode = how?.consume === 'invocation';
  }

  /**
   * True once a receiver with `consume: 'invocation'` is attached: no worker takes alerts, so a
   * due alert (a retried one) runs in the next invocation's sweep or a scheduled sweep.
   */
  get invocationMode(): boolean {
    return this.#invocationMode;
  }

  accept(entry: AlertRecord<'accepted'>, options?: AcceptOptions): Promise<AcceptResult> {
    if (this.#closed) return Promise.reject(new Error('The queue is closed.'));
    return withTimeout(this.record(entry, options), this.#enqueueTimeoutMs, this.notRecorded).then(
      (answer): AcceptResult => {
        if (answer === 'duplicate') return 'duplicate';
        this.accepted();
        return ACCEPTED;
      },
    );
  }

  get queued(): number {
    return 0; // waiting alerts live outside this process
  }

  get running(): number {
    return this.#running;
  }

  /** The receiver's processing; undefined until `attach`. */
  protected get processor(): AlertProcessor | undefined {
    return this.#processor;
  }

  /** Whether `close` was called: `accept` refuses from then on. */
  protected get closed(): boolean {
    return this.#closed;
  }

  /** From now on `accept` refuses (`close` calls it first). */
  protected refuseAccepts(): void {
    this.#closed = true;
  }

  /** Runs `work`, counted in `running` from now until it settles. */
  protected async counted<T>(work: () => Promise<T>): Promise<T> {
    this.#running++;
    try {
      return await work();
    } finally {
      this.#running--;
    }
  }
}
