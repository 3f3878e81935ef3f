/**
 * The page's script, inline under the page's nonce (plain JavaScript: it reaches the browser as
 * written, on every runtime and through any bundler). It renders no markup of its own: text goes
 * in with `textContent`, and a fresh list is the server's own escaped HTML, parsed and swapped in.
 * The API's paths are relative to the page's own path, whatever the mount point, and always begin
 * with a single `/`: a page opened at `//host/ops` must not fetch from `//host` (another origin).
 */
export const PAGE_SCRIPT = `(() => {
'use strict';
const base = location.pathname.replace(/\\/+$/, '').replace(/^[\\/\\\\]+/, '/');
const $ = (id) => document.getElementById(id);
let token = document.querySelector('meta[name="ops-csrf"]').content;
const refreshMs = Number(document.body.dataset.refreshMs) || 5000;
let busy = false;
const sweep = document.body.dataset.sweep !== undefined;
const plural = (n, word) => n + ' ' + word + (n === 1 ? '' : 's');
// The one time format of the page, as the server writes it: 23:41:07 UTC.
const clock = (date) => date.toISOString().slice(11, 19) + ' UTC';

function say(text, bad) {
  const status = $('status');
  status.textContent = text;
  status.className = bad ? 'bad' : '';
}

async function api(path, init) {
  const response = await fetch(base + '/api/' + path, Object.assign({ cache: 'no-store', credentials: 'same-origin' }, init));
  const fresh = response.headers.get('x-churn-risk-csrf');
  if (fresh) token = fresh;
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error((body.error && body.error.message) || 'HTTP ' + response.status);
  return body;
}

function ago(date) {
  const s = Math.max(0, Math.round((Date.now() - date.getTime()) / 1000));
  if (s < 60) return s + ' s ago';
  if (s < 3600) return Math.floor(s / 60) + ' min ago';
  if (s < 172800) return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min ago';
  return Math.floor(s / 86400) + ' days ago';
}

function relativeTimes() {
  for (const time of document.querySelectorAll('time[datetime]')) {
    time.textContent = ago(new Date(time.getAttribute('datetime')));
  }
}

function showStatus(data) {
  const counts = data.counts || {};
  for (const cell of document.querySelectorAll('[data-count]')) {
    const value = counts[cell.dataset.count];
    if (value !== undefined) cell.textContent = String(value);
    if (cell.dataset.count === 'failed') cell.parentElement.classList.toggle('hot', value > 0);
  }
  const health = $('health');
  health.textContent = data.health.reachable ? 'Store reachable' : 'Store unreachable: ' + (data.health.error || 'no reason given');
  health.className = data.health.reachable ? 'ok' : 'bad';
  $('updated').textContent = 'Updated ' + clock(new Date());
  if (counts.failed !== undefined) document.title = document.title.replace(/^(\\(\\d+\\) )?/, '(' + counts.failed + ') ');
  return counts.failed;
}

// Where focus was in the list, to put it back once the list is fresh: the same element, else the
// Retry button now at the same place (the next row's), else the list's heading.
function spot(element) {
  const buttons = [...document.querySelectorAll('button[data-retry]')];
  return { id: element.id, retry: element.dataset.retry, index: buttons.indexOf(element) };
}

function refocus(at) {
  const buttons = [...document.querySelectorAll('button[data-retry]')];
  const target = (at.id && $(at.id)) ||
    (at.retry !== undefined && buttons.find((b) => b.dataset.retry === at.retry)) ||
    (at.index >= 0 && buttons[Math.min(at.index, buttons.length - 1)]) ||
    document.querySelector('#failed h2[tabindex]') || document.querySelector('h1');
  target.focus();
}

function confirmOpen() {
  const dialog = $('confirm-all');
  return Boolean(dialog && dialog.open);
}

async function reloadList(at) {
  const response = await fetch(location.href, { cache: 'no-store', credentials: 'same-origin' });
  if (!response.ok) throw new Error('HTTP ' + response.status);
  // The body only: the head's style element, under another answer's nonce, is no business here.
  const text = await response.text();
  const doc = new DOMParser().parseFromString(text.slice(text.indexOf('<body')), 'text/html');
  const fresh = doc.getElementById('failed');
  const current = $('failed');
  if (!fresh || !current || confirmOpen()) return;
  const open = new Set([...current.querySelectorAll('details[open]')].map((d) => d.dataset.key));
  for (const details of fresh.querySelectorAll('details')) if (open.has(details.dataset.key)) details.open = true;
  const active = document.activeElement;
  const place = at || (active && active !== document.body && current.contains(active) ? spot(active) : undefined);
  current.replaceWith(document.importNode(fresh, true));
  if (place) refocus(place);
  relativeTimes();
}

async function refresh() {
  if (busy) return;
  try {
    const failed = showStatus(await api('counts'));
    if (failed !== undefined && String(failed) !== $('failed').dataset.failed && !confirmOpen()) await reloadList();
  } catch (error) {
    say('Could not refresh: ' + error.message, true);
    return;
  }
  if ($('status').className === 'bad') say('');
  relativeTimes();
}

async function retry(body, button, done) {
  busy = true;
  const at = spot(button);
  button.disabled = true;
  try {
    const result = await api('retry', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-churn-risk-csrf': token },
      body: JSON.stringify(body),
    });
    // Retried: the row is gone; focus goes to the next row's button.
    if (at.retry !== undefined) at.retry = undefined;
    say(done(result.retried) + (sweep ? ' No worker runs this queue: retried alerts run when the next sweep runs.' : ''));
  } catch (error) {
    say('Retry refused: ' + error.message, true);
  } finally {
    busy = false;
    button.disabled = false;
  }
  await reloadList(at).catch(() => refocus(at));
  await refresh();
}

document.addEventListener('click', (event) => {
  const button = event.target.closest('button');
  if (!button) return;
  const dialog = $('confirm-all');
  if (button.dataset.retry !== undefined) {
    void retry({ id: button.dataset.retry }, button, () => 'Retried 1 alert: it is due again.');
  } else if (button.id === 'retry-all') {
    dialog.returnValue = '';
    dialog.showModal();
    $('confirm-no').focus();
  } else if (button.id === 'confirm-no') {
    dialog.close();
  } else if (button.id === 'confirm-yes') {
    dialog.close('yes');
    void retry({ all: true }, $('retry-all'), (n) => 'Retried ' + plural(n, 'alert') + '.');
  }
});

// Closed by Cancel or Escape: focus goes back to the button that opened it.
document.addEventListener('close', (event) => {
  if (event.target.id === 'confirm-all' && event.target.returnValue !== 'yes') $('retry-all').focus();
}, true);

relativeTimes();
setInterval(() => void refresh(), refreshMs);
})();
`;
