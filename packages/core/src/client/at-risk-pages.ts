import { abortedError } from './send-attempt.js';
import type { AtRiskOptions, AtRiskResult, AtRiskUser } from './types.js';

/** Fetches one page of at-risk users. */
export type FetchAtRiskPage = (options: AtRiskOptions) => Promise<AtRiskResult>;

/** The query of the walk, already validated. */
export interface AtRiskWalk {
  threshold?: number | undefined;
  plan?: string | undefined;
  pageSize: number;
  signal?: AbortSignal | undefined;
}

/**
 * Every at-risk user, page by page. The offset advances by the users a page actually held; the
 * walk ends on a page shorter than asked for (or than the service's echoed `limit`), on an empty
 * page, and on a full page that held only users already yielded (a guard against a service that
 * ignores `offset`). A user already yielded is skipped; the signal is checked before each page.
 */
export async function* walkAtRiskPages(
  fetchPage: FetchAtRiskPage,
  walk: AtRiskWalk,
): AsyncGenerator<AtRiskUser, void, undefined> {
  const seen = new Set<string>();
  let offset = 0;
  for (;;) {
    if (walk.signal?.aborted) throw abortedError('GET /v1/at-risk', walk.signal);
    const page = await fetchPage({
      threshold: walk.threshold,
      plan: walk.plan,
      limit: walk.pageSize,
      offset,
      signal: walk.signal,
    });
    let fresh = 0;
    for (const user of page.users) {
      if (seen.has(user.userId)) continue;
      seen.add(user.userId);
      fresh++;
      yield user;
    }
    const expected = Math.min(walk.pageSize, page.limit);
    if (page.users.length === 0 || page.users.length < expected || fresh === 0) return;
    offset += page.users.length;
  }
}
