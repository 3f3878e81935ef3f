import type { Watch } from './watch-registry.js';

/**
 * Whether a score change should fire the watch's alert: the score moved from below the threshold
 * (a new user counts as below) to at or above it, and the watch is not in its cooldown.
 * A watch registered on a user already above its threshold stays quiet until a new crossing.
 */
export function shouldAlert(
  watch: Watch,
  before: number | undefined,
  after: number,
  now: number,
): boolean {
  const crossed = (before === undefined || before < watch.threshold) && after >= watch.threshold;
  if (!crossed) return false;
  return watch.lastAlertAt === undefined || now - watch.lastAlertAt >= watch.cooldownMs;
}
