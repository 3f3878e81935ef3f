import { html, type Html } from './escape.js';
import type { ShownCounts, StoreStatus } from './store-reads.js';

/** The states in the order an on-call engineer reads them: what failed first. */
const STATES: readonly (keyof ShownCounts)[] = [
  'failed',
  'waiting',
  'delayed',
  'active',
  'completed',
];

/** The store's health line: what is wrong, in the store's own words (never a secret). */
export function renderHealth(status: StoreStatus): Html {
  const { health } = status;
  return health.reachable
    ? html`<p id="health" class="ok">Store reachable</p>`
    : html`<p id="health" class="bad">Store unreachable: ${health.error ?? 'no reason given'}</p>`;
}

/** The counts by state; a state the store does not count is not shown. */
export function renderCounts(status: StoreStatus): Html {
  const { counts } = status;
  if (counts === undefined) {
    return html`<section id="counts" aria-label="Alerts by state">
      <p class="bad">The counts could not be read.</p>
    </section>`;
  }
  const cells = STATES.filter((state) => counts[state] !== undefined).map(
    (state) =>
      html`<div class="count ${state}${state === 'failed' && counts.failed > 0 ? ' hot' : ''}">
        <dt>${state}</dt>
        <dd data-count="${state}">${counts[state]}</dd>
      </div>`,
  );
  if (counts.superseded !== undefined) {
    cells.push(
      html`<div
        class="count superseded"
        title="Handler runs skipped in this process: a newer alert of the same user had been accepted"
      >
        <dt>superseded</dt>
        <dd data-count="superseded">${counts.superseded}</dd>
      </div>`,
    );
  }
  return html`<section id="counts" aria-label="Alerts by state"><dl>${cells}</dl></section>`;
}
