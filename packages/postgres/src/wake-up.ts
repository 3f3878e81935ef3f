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
