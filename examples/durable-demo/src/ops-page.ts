import type { Report } from './report.js';

/**
 * Reads the web process's failed alerts' page through its JSON API (`GET <page>/api/counts`), as
 * a script would: every alert was handled, so the store is reachable and none is failed.
 */
export async function checkOpsPage(page: string, report: Report): Promise<void> {
  const response = await fetch(`${page}/api/counts`);
  if (!response.ok) {
    report.fail(`${page}/api/counts answered ${String(response.status)}`);
    return;
  }
  const { counts, health } = (await response.json()) as {
    counts?: { failed: number };
    health: { reachable: boolean; error?: string };
  };
  if (!health.reachable)
    report.fail(`the failed alerts page says: ${health.error ?? 'unreachable'}`);
  else if (counts?.failed !== 0)
    report.fail(`the failed alerts page counts ${String(counts?.failed)}`);
  else report.ok(`failed alerts page (${page}): store reachable, 0 failed`);
}
