import type { DashboardState } from '../dashboard-state.js';
import { h } from './dom.js';
import { formatScore, formatTraits } from './format.js';
import { sparkline } from './sparkline.js';

/** The users table: score, tier, signals, traits, recent events, a chart, and a test-alert button. */
export function renderUsers(state: DashboardState): HTMLElement {
  if (state.users.length === 0)
    return h('p', { class: 'empty' }, 'No users yet: identify or track one through the API.');
  const thresholds = new Map(state.watches.map((watch) => [watch.userId, watch.threshold]));
  const rows = state.users.map((user) => {
    const threshold = thresholds.get(user.userId);
    return h(
      'tr',
      { 'data-user': user.userId },
      h('th', { scope: 'row' }, h('code', { class: 'user-id' }, user.userId)),
      h('td', { class: 'num score' }, formatScore(user.score)),
      h('td', {}, h('span', { class: `tier tier-${user.tier}` }, user.tier)),
      h('td', { class: 'signals' }, user.signals.join(', ') || '-'),
      h('td', { class: 'traits' }, formatTraits(user.traits)),
      h('td', { class: 'events' }, user.recentEvents.join(', ') || '-'),
      h('td', {}, sparkline(user.history, threshold)),
      h(
        'td',
        {},
        h(
          'button',
          {
            type: 'button',
            'data-action': 'test-alert',
            'data-user-id': user.userId,
            'data-key': `test-alert:${user.userId}`,
            disabled: threshold === undefined,
            title: threshold === undefined ? 'Watch this user first' : undefined,
          },
          'Send test alert',
        ),
      ),
    );
  });
  const more =
    state.usersTotal > state.users.length
      ? h(
          'p',
          { class: 'note' },
          `Showing the ${state.users.length} highest of ${state.usersTotal}.`,
        )
      : null;
  return h(
    'div',
    { class: 'scroll' },
    h(
      'table',
      { id: 'users-table' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...[
            'User',
            'Score',
            'Tier',
            'Signals',
            'Traits',
            'Recent events',
            'Score over time',
            '',
          ].map((label) => h('th', { scope: 'col' }, label)),
        ),
      ),
      h('tbody', {}, ...rows),
    ),
    more,
  );
}
