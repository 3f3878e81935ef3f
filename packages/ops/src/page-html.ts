import { html, Html } from './escape.js';
import { clockUtc } from './plural.js';
import { PAGE_CSS } from './page-css.js';
import { PAGE_SCRIPT } from './page-script.js';
import { renderFailed } from './render-failed.js';
import { renderCounts, renderHealth } from './render-status.js';
import type { FailedPage, StoreStatus } from './store-reads.js';

/** What one rendering of the page shows. */
export interface PageInput {
  status: StoreStatus;
  /** The page of failed alerts, or why it could not be read. */
  failed: FailedPage | { error: string };
  csrfToken: string;
  nonce: string;
  refreshMs: number;
  now: Date;
  /** No worker takes alerts: a retried alert runs at the next sweep (the page says so). */
  invocationMode?: boolean;
}

/** The whole page: server-rendered, every value escaped, its style and script under `nonce`. */
export function renderPage(input: PageInput): string {
  const { status, failed, nonce } = input;
  const failedCount = status.counts?.failed;
  const title = `${failedCount === undefined ? '' : `(${failedCount}) `}Failed alerts · churn-risk`;
  const list =
    'error' in failed
      ? html`<section id="failed" data-failed=""><p class="bad">${failed.error}</p></section>`
      : renderFailed(failed, failedCount, input.invocationMode === true);
  const page = html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="ops-csrf" content="${input.csrfToken}" />
        <title>${title}</title>
        <style nonce="${nonce}">
          ${new Html(PAGE_CSS)}
        </style>
      </head>
      <body
        data-refresh-ms="${input.refreshMs}"
        ${input.invocationMode === true ? new Html('data-sweep=""') : ''}
      >
        <header>
          <h1 tabindex="-1">Failed alerts</h1>
          ${status.kind === undefined ? '' : html`<span class="kind">${status.kind}</span>`}
          ${renderHealth(status)}<span id="updated">Updated ${clockUtc(input.now)}</span>
        </header>
        <main>
          ${renderCounts(status)}
          <p id="status" role="status" aria-live="polite"></p>
          ${list}
        </main>
        <script nonce="${nonce}">
          ${new Html(PAGE_SCRIPT)};
        </script>
      </body>
    </html>`;
  return page.value;
}
