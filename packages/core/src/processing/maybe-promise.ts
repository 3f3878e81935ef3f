/**
 * A value or a promise of it. The receiver's usual path is synchronous (node:crypto, the in-memory
 * queue, handlers that return at once), so its steps return a promise only when one of them waits.
 */
export type MaybePromise<T> = T | Promise<T>;

/**
 * True for a promise or any other thenable (what `await` would wait for): the one check the
 * receiver uses to tell a value from a promise, whether the value is its own or a handler's.
 */
export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * `next(value)`, at once for a value, once it settles for a promise (or thenable): the one way
 * to chain a step after a `MaybePromise`. `failed` handles a rejection (a promise's only: a value
 * cannot fail).
 */
export function andThen<T, R>(
  value: MaybePromise<T>,
  next: (value: T) => MaybePromise<R>,
  failed?: (error: unknown) => MaybePromise<R>,
): MaybePromise<R> {
  if (!isPromiseLike(value)) return next(value);
  return Promise.resolve(value).then(next, failed);
}

/**
 * `setTimeout` that never holds a process open (`unref` where the platform has it: Node, Bun,
 * Deno); returns how to cancel it.
 */
export function startTimer(run: () => void, ms: number): () => void {
  const timer = setTimeout(run, ms) as unknown as { unref?: () => void };
  timer.unref?.();
  return () => {
    clearTimeout(timer as unknown as Parameters<typeof clearTimeout>[0]);
  };
}
