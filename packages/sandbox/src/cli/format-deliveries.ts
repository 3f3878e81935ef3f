import type { DeliveryRecord } from '../deliveries/delivery-record.js';
import type { DeliveryAttempt } from '../deliveries/send-attempt.js';

/** A client-supplied string made safe for a terminal: control characters shown as `\uXXXX`. */
export function printable(text: string): string {
  return text.replace(
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f-\u009f]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** `HTTP 500 (3 ms)`, `error: connect ECONNREFUSED (1 ms)`, with chaos notes. */
export function describeTry(attempt: DeliveryAttempt): string {
  const result =
    attempt.status === undefined
      ? `error: ${attempt.error ?? 'unknown'}`
      : `HTTP ${attempt.status}`;
  const notes = [
    attempt.duplicate && 'duplicate',
    attempt.badSignature && 'bad signature',
    attempt.delayedMs !== undefined && `delayed ${attempt.delayedMs} ms`,
  ].filter((note): note is string => typeof note === 'string');
  const chaos = notes.length > 0 ? ` [chaos: ${notes.join(', ')}]` : '';
  return `${printable(result)} (${attempt.durationMs} ms)${chaos}`;
}

/** One line per try, for `deliveries --follow`. */
export function tryLine(record: DeliveryRecord, index: number): string {
  const attempt = record.attempts[index];
  if (!attempt) return '';
  const next = record.nextAttemptAt === null ? record.state : `next try ${record.nextAttemptAt}`;
  const user = printable(record.alert.userId);
  return `${attempt.at} ${record.id} ${user} try ${index + 1}: ${describeTry(attempt)}; ${next}\n`;
}

const COLUMNS = ['ID', 'USER', 'STATE', 'TRIES', 'LAST TRY', 'NEXT TRY'] as const;

/** The delivery log as a table with a header line; a note when it is empty. */
export function deliveriesTable(records: readonly DeliveryRecord[]): string {
  if (records.length === 0) return 'No deliveries.\n';
  const rows = records.map((record) => {
    const last = record.attempts.at(-1);
    return [
      record.id,
      printable(record.alert.userId),
      record.state,
      String(record.attempts.length),
      last ? describeTry(last) : '-',
      record.nextAttemptAt ?? '-',
    ];
  });
  const widths = COLUMNS.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)),
  );
  const line = (cells: readonly string[]): string =>
    `${cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd()}\n`;
  return line(COLUMNS) + rows.map(line).join('');
}
