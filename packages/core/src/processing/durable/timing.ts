/**
 * Settles like `promise`, or rejects with `Error("<message> within <ms> ms.")` once `ms` have
 * passed first (a late outcome of `promise` is dropped, never an unhandled rejection). For store
 * authors: an `AlertStore`'s `health()` must answer even when its back end hangs.
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

const POLL_MS = 50;

/**
 * Resolves once `check` is true, asking every 50 ms. An aborted `signal` stops asking (the promise
 * then never settles). A `check` that throws counts as false.
 */
export function pollUntil(
  check: () => boolean | Promise<boolean>,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise<void>((resolve) => {
    const stopped = (): boolean => signal?.aborted === true;
    const tick = async (): Promise<void> => {
      if (stopped()) return;
      let done = false;
      try {
        done = await check();
      } catch {
        done = false;
      }
      if (done) resolve();
      else if (!stopped()) setTimeout(() => void tick(), POLL_MS);
    };
    // First check on a later microtask: work scheduled in this turn (a worker being started) is
    // then in place.
    void Promise.resolve().then(tick);
  });
}

/** Waits `ms` milliseconds; `wake()` of the returned handle ends the wait early. */
export function nap(ms: number): { done: Promise<void>; wake: () => void } {
  let wake: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  return { done, wake };
}
