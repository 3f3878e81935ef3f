/** Resolves on SIGINT or SIGTERM, or when `stop` aborts (tests); removes its listeners then. */
export function waitForStop(stop?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      stop?.removeEventListener('abort', done);
      resolve();
    };
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
    if (stop?.aborted === true) done();
    else stop?.addEventListener('abort', done, { once: true });
  });
}
