import type { DashboardState } from '../dashboard-state.js';
import { h } from './dom.js';
import { formatTime } from './format.js';

/** The watches table. */
export function renderWatches(state: DashboardState): HTMLElement {
  if (state.watches.length === 0) return h('p', { class: 'empty' }, 'No watches yet.');
  return h(
    'div',
    { class: 'scroll' },
    h(
      'table',
      { id: 'watches-table' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...['User', 'Threshold', 'Webhook', 'Cooldown', 'Last alert'].map((label) =>
            h('th', { scope: 'col' }, label),
          ),
        ),
      ),
      h(
        'tbody',
        {},
        ...state.watches.map((watch) =>
          h(
            'tr',
            {},
            h('th', { scope: 'row' }, h('code', {}, watch.userId)),
            h('td', { class: 'num' }, watch.threshold),
            h('td', { class: 'webhook' }, watch.webhook),
            h('td', {}, watch.cooldown),
            h('td', {}, formatTime(watch.lastAlertAt)),
          ),
        ),
      ),
    ),
  );
}
