import { tierFor } from '../scoring/tier.js';
import { UsageError } from './cli-io.js';

/** Fields of the alert that always stay strings. */
const STRING_FIELDS = new Set(['event', 'userId', 'tier', 'recommendation', 'triggeredAt']);

function parseValue(field: string, value: string): unknown {
  if (STRING_FIELDS.has(field)) return value;
  if (field === 'signals' && !value.startsWith('['))
    return value === '' ? [] : value.split(',').map((signal) => signal.trim());
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value; // not JSON: the text as it is
  }
}

/**
 * Applies `--set field=value` items to an alert, in order. `event`, `userId`, `tier`,
 * `recommendation` and `triggeredAt` take the text as it is; `signals` a comma-separated list (or a
 * JSON array); any other field (`score`, or a new one) JSON when the text parses (`0.9`, `true`,
 * `{"a":1}`), else the text. Setting `score` without `tier` sets the tier that follows from it.
 * Nothing is validated: an invalid alert is a way to test a receiver's `400`.
 */
export function applyAlertFields(
  alert: Readonly<Record<string, unknown>>,
  items: readonly string[],
): Record<string, unknown> {
  const result: Record<string, unknown> = { ...alert };
  const fields = new Set<string>();
  for (const item of items) {
    const split = item.indexOf('=');
    const field = split > 0 ? item.slice(0, split) : '';
    if (field === '' || field === '__proto__')
      throw new UsageError(`--set takes field=value (a field name, then "="), got "${item}".`);
    result[field] = parseValue(field, item.slice(split + 1));
    fields.add(field);
  }
  const { score } = result;
  if (
    fields.has('score') &&
    !fields.has('tier') &&
    typeof score === 'number' &&
    score >= 0 &&
    score <= 1
  )
    result['tier'] = tierFor(score);
  return result;
}
