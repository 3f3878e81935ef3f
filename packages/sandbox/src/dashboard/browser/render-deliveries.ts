import type { DeliveryRecord } from '../../deliveries/delivery-record.js';
import type { DeliveryAttempt } from '../../deliveries/send-attempt.js';
import { h } from './dom.js';
import { formatTime, relativeTime } from './format.js';

function outcome(attempt: DeliveryAttempt): HTMLElement {
  if (attempt.status === undefined)
    return h('span', { class: 'bad' }, `error: ${attempt.error ?? 'unknown'}`);
  const ok = attempt.status >= 200 && attempt.status < 300;
  return h('span', { class: ok ? 'ok' : 'bad' }, `HTTP ${attempt.status}`);
}

function notes(attempt: DeliveryAttempt): string {
  const parts: string[] = [];
  if (attempt.duplicate) parts.push('chaos: duplicate');
  if (attempt.badSignature) parts.push('chaos: bad signature');
  if (attempt.delayedMs !== undefined) parts.push(`chaos: delayed ${attempt.delayedMs} ms`);
  return parts.join('; ');
}

function triesTable(record: DeliveryRecord): HTMLElement {
  if (record.attempts.length === 0) return h('p', { class: 'note' }, 'First try in flight.');
  return h(
    'table',
    { class: 'tries' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...['Try', 'Time', 'Result', 'Duration', 'Notes'].map((label) =>
          h('th', { scope: 'col' }, label),
        ),
      ),
    ),
    h(
      'tbody',
      {},
      ...record.attempts.map((attempt, index) =>
        h(
          'tr',
          { class: 'try' },
          h('td', { class: 'num' }, index + 1),
          h('td', {}, formatTime(attempt.at)),
          h('td', { class: 'result' }, outcome(attempt)),
          h('td', { class: 'num' }, `${attempt.durationMs} ms`),
          h('td', {}, notes(attempt)),
        ),
      ),
    ),
  );
}

/**
 * One delivery: its id (copyable), state, user, score and next try, a replay button (the buttons
 * stay on the header's first line), where it goes (and what it replays) and its tries.
 */
export function renderDelivery(record: DeliveryRecord, now: number): HTMLElement {
  const next =
    record.nextAttemptAt === null
      ? '-'
      : `${formatTime(record.nextAttemptAt)} (${relativeTime(record.nextAttemptAt, now)})`;
  return h(
    'article',
    {
      class: `delivery state-${record.state}`,
      'data-delivery': record.id,
      'data-replay-of': record.replayOf,
    },
    h(
      'header',
      {},
      h('code', { class: 'delivery-id' }, record.id),
      h(
        'button',
        {
          type: 'button',
          'data-action': 'copy',
          'data-copy': record.id,
          'data-key': `copy:${record.id}`,
        },
        'Copy id',
      ),
      h(
        'span',
        { class: 'summary' },
        h('span', { class: `badge ${record.state}` }, record.state),
        h('span', {}, 'user ', h('code', {}, record.alert.userId)),
        h('span', {}, `score ${record.alert.score}, ${record.alert.tier}`),
        h('span', { class: 'next' }, `next try: ${next}`),
      ),
      h(
        'button',
        {
          type: 'button',
          'data-action': 'replay',
          'data-delivery-id': record.id,
          'data-key': `replay:${record.id}`,
        },
        'Replay',
      ),
    ),
    // The replay note goes below the header, so that it never pushes the buttons to a new line.
    h(
      'p',
      { class: 'webhook' },
      `to ${record.webhook}`,
      record.replayOf === undefined
        ? null
        : h('span', { class: 'note replay-of' }, ` · replay of ${record.replayOf}`),
    ),
    triesTable(record),
  );
}
