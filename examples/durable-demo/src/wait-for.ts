import { setTimeout as delay } from 'node:timers/promises';

/** Polls `check` every 50 ms until it returns a value other than `undefined`, or gives up. */
export async function waitFor<T>(
  check: () => T | undefined | Promise<T | undefined>,
  { timeoutMs = 10_000, what = 'the condition' }: { timeoutMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      throw new Error(`Timed out after ${timeoutMs / 1000} s waiting for ${what}.`);
    }
    await delay(50);
  }
}
