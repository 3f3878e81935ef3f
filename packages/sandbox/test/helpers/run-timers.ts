import type { ManualClock, Sandbox } from '@churn-risk/sandbox';

/**
 * Runs every pending timer of a manual clock in order, waiting for the deliveries' tries in flight
 * after each, until no timer is left (or `until` is reached). Bounded by `maxSteps`.
 */
export async function runTimers(
  clock: ManualClock,
  sandbox: Sandbox,
  until = Infinity,
  maxSteps = 1000,
): Promise<void> {
  await sandbox.deliveries.idle();
  for (let step = 0; step < maxSteps; step++) {
    const next = clock.nextTimerAt();
    if (next === undefined || next > until) return;
    clock.advanceTo(next);
    await sandbox.deliveries.idle();
  }
  throw new Error('runTimers: too many steps');
}
