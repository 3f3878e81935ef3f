/** `n` with `word`, plural when `n` is not 1: `1 failed alert`, `2 failed alerts`. */
export function counted(n: number, word: string): string {
  return `${String(n)} ${word}${n === 1 ? '' : 's'}`;
}

/** `date` as the page shows every time: `23:41:07 UTC` (the script writes the same). */
export function clockUtc(date: Date): string {
  return `${date.toISOString().slice(11, 19)} UTC`;
}
