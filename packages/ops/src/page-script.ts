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
  $('updated').textContent = 'Updated ' + new Date().toLocaleTimeString();
  if (counts.failed !== undefined) document.title = document.title.replace(/^(\\(\\d+\\) )?/, '(' + counts.failed + ') ');
  return counts.failed;
}

async function reloadList() {
  const response = await fetch(location.href, { cache: 'no-store', credentials: 'same-origin' });
  if (!response.ok) throw new Error('HTTP ' + response.status);
  // The body only: the head's style element, under another answer's nonce, is no business here.
  const text = await response.text();
  const doc = new DOMParser().parseFromString(text.slice(text.indexOf('<body')), 'text/html');
  const fresh = doc.getElementById('failed');
  const current = $('failed');
  if (!fresh || !current) return;
  const open = new Set([...current.querySelectorAll('details[open]')].map((d) => d.dataset.key));
  for (const details of fresh.querySelectorAll('details')) if (open.has(details.dataset.key)) details.open = true;
  current.replaceWith(document.importNode(fresh, true));
  relativeTimes();
}

async function refresh() {
  if (busy) return;
  try {
    const failed = showStatus(await api('counts'));
    if (failed !== undefined && String(failed) !== $('failed').dataset.failed) await reloadList();
  } catch (error) {
    say('Could not refresh: ' + error.message, true);
    return;
  }
  if ($('status').className === 'bad') say('');
  relativeTimes();
}

async function retry(body, button, done) {
  busy = true;
  if (button) button.disabled = true;
  try {
    const result = await api('retry', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-churn-risk-csrf': token },
      body: JSON.stringify(body),
    });
    say(done(result.retried));
  } catch (error) {
    say('Retry refused: ' + error.message, true);
    if (button) button.disabled = false;
  } finally {
    busy = false;
  }
  await reloadList().catch(() => undefined);
  await refresh();
}

document.addEventListener('click', (event) => {
  const button = event.target.closest('button');
  if (!button) return;
  if (button.dataset.retry !== undefined) {
    void retry({ id: button.dataset.retry }, button, () => 'Retried: the alert is due again.');
  } else if (button.id === 'retry-all') {
    $('confirm-all').hidden = false;
    $('confirm-yes').focus();
  } else if (button.id === 'confirm-no') {
    $('confirm-all').hidden = true;
  } else if (button.id === 'confirm-yes') {
    $('confirm-all').hidden = true;
    void retry({ all: true }, button, (n) => 'Retried ' + n + (n === 1 ? ' alert.' : ' alerts.'));
  }
});

relativeTimes();
setInterval(() => void refresh(), refreshMs);
})();
`;
