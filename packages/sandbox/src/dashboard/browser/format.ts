/** `2025-01-01 12:00:00` (UTC) for an ISO time; `-` for none. */
export function formatTime(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '-';
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

/** `in 3 min`, `5 h ago`: the distance from `now` to `iso`, roughly. */
export function relativeTime(iso: string, now: number): string {
  const ms = Date.parse(iso) - now;
  const abs = Math.abs(ms);
  const [value, unit] =
    abs < 60_000
      ? [Math.round(abs / 1000), 's']
      : abs < 3_600_000
        ? [Math.round(abs / 60_000), 'min']
        : abs < 172_800_000
          ? [Math.round(abs / 3_600_000), 'h']
          : [Math.round(abs / 86_400_000), 'd'];
  return ms >= 0 ? `in ${value} ${unit}` : `${value} ${unit} ago`;
}

/** `1 user`, `2 users`, `0 deliveries`: a count with its noun in the right number. */
export function countOf(count: number, singular: string, plural = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : plural}`;
}

/** A score with two decimals. */
export function formatScore(score: number): string {
  return score.toFixed(2);
}

/** Traits as `plan=pro, mrr=99`. */
export function formatTraits(traits: Record<string, unknown>): string {
  const parts = Object.entries(traits)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}=${String(value)}`);
  return parts.length === 0 ? '-' : parts.join(', ');
}
