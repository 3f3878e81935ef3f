/**
 * The sandbox dashboard (GET /dashboard). It reads the API key from the URL fragment (`#key=...`,
 * never sent to a server), polls `GET /v1/sandbox/state` with its ETag, and renders every string
 * as text. Only type imports may reach outside this folder: the sandbox serves these files one by
 * one when it runs from source.
 */
import { ApiFailure, createApi, type DashboardApi } from './api.js';
import { replaceKeepingFocus } from './dom.js';
import type { DashboardState } from '../dashboard-state.js';
import { countOf } from './format.js';
import { renderChaos, renderClock } from './render-clock.js';
import { renderDelivery } from './render-deliveries.js';
import { renderUsers } from './render-users.js';
import { renderWatches } from './render-watches.js';

// The dashboard shows a change within a second: a poll and its render must fit in it, with room
// to spare on a busy machine.
const POLL_MS = 250;

const byId = (id: string): HTMLElement => {
  const element = document.getElementById(id);
  if (!element) throw new Error(`#${id} is missing from the page`);
  return element;
};

function say(message: string, kind: 'info' | 'error' = 'info'): void {
  const status = byId('message');
  status.textContent = message;
  status.className = kind;
}

/**
 * The connection badge: hidden until the key has worked once (a missing or rejected key shows no
 * "Live"), then `Live`, or a retrying notice while the sandbox does not answer.
 */
function showConnection(text: string | undefined): void {
  const badge = byId('live');
  badge.hidden = text === undefined;
  badge.textContent = text ?? '';
  badge.classList.toggle('down', text !== undefined && text !== 'Live');
}

function render(state: DashboardState): void {
  const now = state.clock.now === null ? Date.now() : Date.parse(state.clock.now);
  const status = (byId('filter-status') as HTMLSelectElement).value;
  const user = (byId('filter-user') as HTMLInputElement).value.trim();
  const shown = state.deliveries.filter(
    (record) =>
      (status === '' || record.state === status) && (user === '' || record.alert.userId === user),
  );
  replaceKeepingFocus(byId('clock'), ...renderClock(state), renderChaos(state));
  replaceKeepingFocus(byId('users'), renderUsers(state));
  replaceKeepingFocus(byId('watches'), renderWatches(state));
  replaceKeepingFocus(
    byId('deliveries'),
    ...(shown.length === 0
      ? ['No deliveries to show.']
      : shown.map((record) => renderDelivery(record, now))),
  );
  byId('counts').textContent = [
    countOf(state.usersTotal, 'user'),
    countOf(state.watches.length, 'watch', 'watches'),
    countOf(state.deliveriesTotal, 'delivery', 'deliveries'),
  ].join(', ');
}

async function act(api: DashboardApi, button: HTMLElement, refresh: () => void): Promise<void> {
  const { action } = button.dataset;
  if (action === 'copy') {
    await navigator.clipboard.writeText(button.dataset['copy'] ?? '');
    say('Copied.');
    return;
  }
  if (action === 'replay') {
    const record = await api.replay(button.dataset['deliveryId'] ?? '');
    say(`Replay started: ${record.id}`);
  } else if (action === 'test-alert') {
    const record = await api.testAlert(button.dataset['userId'] ?? '');
    say(`Test alert sent: ${record.id}`);
  } else if (action === 'advance') {
    const { now } = await api.advanceClock(Number(button.dataset['ms']));
    say(`Clock advanced to ${now}`);
  }
  refresh();
}

function start(key: string): void {
  const api = createApi(key);
  let etag: string | undefined;
  let latest: DashboardState | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const poll = async (): Promise<void> => {
    clearTimeout(timer);
    try {
      const update = await api.state(etag);
      if (update) {
        ({ etag, state: latest } = update);
        render(update.state);
      }
      showConnection('Live');
    } catch (error) {
      if (error instanceof ApiFailure && error.status === 401) {
        showConnection(undefined);
        byId('app').hidden = true;
        byId('key-rejected').hidden = false;
        return;
      }
      // Only a key that has worked gets a connection badge.
      if (latest !== undefined) showConnection('Disconnected: retrying');
    }
    timer = setTimeout(() => void poll(), POLL_MS);
  };
  byId('app').hidden = false;
  document.addEventListener('click', (event) => {
    const button = (event.target as Element | null)?.closest<HTMLElement>('button[data-action]');
    if (!button) return;
    act(api, button, () => void poll()).catch((error: unknown) => {
      say(error instanceof Error ? error.message : String(error), 'error');
    });
  });
  for (const id of ['filter-status', 'filter-user']) {
    byId(id).addEventListener('input', () => {
      if (latest) render(latest);
    });
  }
  void poll();
}

const key = new URLSearchParams(window.location.hash.slice(1)).get('key');
window.addEventListener('hashchange', () => {
  window.location.reload();
});
if (key === null || key === '') byId('key-missing').hidden = false;
else start(key);
