import type { DashboardState } from '../dashboard-state.js';
import { h, type Child } from './dom.js';
import { formatTime } from './format.js';

/** The time-travel steps offered on a manual clock. */
export const CLOCK_STEPS: readonly (readonly [string, number])[] = [
  ['+1 min', 60_000],
  ['+1 h', 3_600_000],
  ['+1 day', 86_400_000],
  ['+72 h', 259_200_000],
];

/** The clock panel: the time and the advance buttons on a manual clock, a note on the system clock. */
export function renderClock(state: DashboardState): Child[] {
  if (state.clock.mode !== 'manual')
    return [h('p', {}, 'System clock (start with --clock manual to travel in time).')];
  return [
    h('p', {}, 'Manual clock: ', h('time', { id: 'clock-now' }, formatTime(state.clock.now))),
    h(
      'div',
      { class: 'buttons', role: 'group', 'aria-label': 'Advance the clock' },
      ...CLOCK_STEPS.map(([label, ms]) =>
        h(
          'button',
          { type: 'button', 'data-action': 'advance', 'data-ms': ms, 'data-key': `advance:${ms}` },
          label,
        ),
      ),
    ),
  ];
}

/** The chaos settings, when any is on. */
export function renderChaos(state: DashboardState): Child {
  const { duplicateRate, maxExtraDelayMs, badSignatureRate } = state.chaos;
  if (duplicateRate === 0 && maxExtraDelayMs === 0 && badSignatureRate === 0) return null;
  return h(
    'p',
    { class: 'chaos' },
    `Chaos on: duplicates ${duplicateRate}, extra delay up to ${maxExtraDelayMs} ms, bad signatures ${badSignatureRate}`,
  );
}
