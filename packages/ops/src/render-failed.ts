import type { AlertRecord } from '@churn-risk/core';
import { html, type Html } from './escape.js';
import { counted } from './plural.js';
import type { FailedPage } from './store-reads.js';

/** `iso` (an ISO date) as `2026-11-28 01:50:12 UTC`. */
function utc(iso: string): string {
  return `${iso.slice(0, 19).replace('T', ' ')} UTC`;
}

/** `ms` (since the epoch) in a `<time>` that the page's script keeps relative ("3 min ago"). */
function when(ms: number | undefined): Html {
  if (ms === undefined || !Number.isFinite(ms)) return html`<span>unknown</span>`;
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}" title="${utc(iso)}">${utc(iso)}</time>`;
}

function renderAlert(failed: AlertRecord<'failed'>): Html {
  const { alert } = failed;
  const succeeded = failed.succeeded.length > 0 ? failed.succeeded.join(', ') : 'none';
  return html`<li class="alert">
    <div class="head">
      <strong>${alert.userId}</strong> <span class="tier">${alert.tier} ${alert.score}</span>
      <span class="failed-at">failed ${when(failed.failedAt)}</span>
      <button
        type="button"
        data-retry="${failed.jobId}"
        aria-label="Retry alert for user ${alert.userId} (alert id ${failed.id})"
      >
        Retry
      </button>
    </div>
    <pre class="error">${failed.error}</pre>
    <p class="meta">
      <span>Tries: ${failed.tries}</span> <span>Handlers that succeeded: ${succeeded}</span>
      <span>Received: ${when(failed.receivedAt)}</span> <span>Alert id: ${failed.id}</span>
    </p>
    <details data-key="${failed.jobId}">
      <summary>Alert JSON</summary>
      <pre>${JSON.stringify(alert, null, 2)}</pre>
    </details>
  </li>`;
}

/** The errors of the listed alerts, most frequent first: what is failing, at a glance. */
function renderErrorSummary(alerts: readonly AlertRecord<'failed'>[]): Html | undefined {
  if (alerts.length < 2) return undefined;
  const counts = new Map<string, number>();
  for (const { error } of alerts) {
    const line = error.split('\n')[0]?.slice(0, 200) ?? '';
    counts.set(line, (counts.get(line) ?? 0) + 1);
  }
  // Only where errors repeat: a list of distinct errors says nothing the rows do not.
  if (counts.size === alerts.length) return undefined;
  const rows = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 5);
  return html`<div class="summary">
    <h2>Errors on this page</h2>
    <ul>
      ${rows.map(([error, n]) => html`<li><b>${n}×</b> <code>${error}</code></li>`)}
    </ul>
  </div>`;
}

function renderPager(page: FailedPage): Html | undefined {
  if (page.offset === 0 && page.next === null) return undefined;
  const newer = Math.max(0, page.offset - page.limit);
  return html`<nav class="pager">
    ${page.offset > 0 ? html`<a href="?offset=${newer}&amp;limit=${page.limit}">← Newer</a>` : ''}
    <span>${page.offset + 1}–${page.offset + page.alerts.length}</span> ${
      page.next !== null
        ? html`<a href="?offset=${page.next}&amp;limit=${page.limit}">Older →</a>`
        : ''
    }
  </nav>`;
}

/** The failed list with its toolbar, the retry-all confirmation, and the pager. */
export function renderFailed(
  page: FailedPage,
  failedCount: number | undefined,
  invocationMode = false,
): Html {
  const total = failedCount ?? page.alerts.length;
  const shown = failedCount === undefined ? '' : String(failedCount);
  if (page.alerts.length === 0) {
    const empty =
      page.offset === 0
        ? html`<div class="empty">
            <h2 tabindex="-1">No failed alerts</h2>
            <p>
              An alert shows here once its last try fails; retrying it puts it back in the queue,
              and it skips the handlers that had succeeded.
            </p>
          </div>`
        : html`<div class="empty">
            <h2 tabindex="-1">Nothing on this page</h2>
            <p><a href="?">Back to the newest failed alerts</a></p>
          </div>`;
    return html`<section id="failed" data-failed="${shown}">${empty}</section>`;
  }
  return html`<section id="failed" data-failed="${shown}">
    <div class="toolbar">
      <button type="button" id="retry-all">Retry all ${counted(total, 'failed alert')}…</button>
      <span>Newest first</span>
    </div>
    ${
      invocationMode
        ? html`<p class="note">
            No worker runs this queue: a retried alert runs when the next sweep runs (a scheduled
            sweep, or the one that follows the next delivery).
          </p>`
        : ''
    }
    <dialog id="confirm-all" class="confirm" aria-labelledby="confirm-title">
      <h2 id="confirm-title">Retry all ${counted(total, 'failed alert')}?</h2>
      <p>Each one runs again, skipping the handlers that had succeeded for it.</p>
      <button type="button" id="confirm-no" autofocus>Cancel</button>
      <button type="button" id="confirm-yes" class="danger">Yes, retry all</button>
    </dialog>
    ${renderErrorSummary(page.alerts)}
    <ol class="alerts" aria-label="${counted(page.alerts.length, 'failed alert')} on this page">
      ${page.alerts.map(renderAlert)}
    </ol>
    ${renderPager(page)}
  </section>`;
}
