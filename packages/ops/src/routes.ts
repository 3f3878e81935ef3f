import type { AlertRecord } from '@churn-risk/core';
import { OpsError } from './ops-error.js';
import { MAX_PAGE_SIZE } from './resolve-options.js';
import type { FailedPage } from './store-reads.js';

/** What a request asks for, read from the end of its path (the mount point is not known). */
export type OpsRoute = 'page' | 'failed' | 'counts' | 'retry' | 'unknown';

const API = /(?:^|\/)api(?:\/([^/]*))?\/?$/;

/**
 * `…/api/failed`, `…/api/counts` and `…/api/retry` are the JSON API; any other `…/api/…` is not
 * found; every other path is the page (served at the mount point, with or without a final `/`).
 */
export function routeOf(pathname: string): OpsRoute {
  const match = API.exec(pathname);
  if (match === null) return /\/api\//.test(pathname) ? 'unknown' : 'page';
  const name = match[1];
  return name === 'failed' || name === 'counts' || name === 'retry' ? name : 'unknown';
}

function whole(
  name: string,
  text: string | null,
  fallback: number,
  max: number,
  min: number,
): number {
  if (text === null || text === '') return fallback;
  const value = /^[0-9]{1,9}$/.test(text) ? Number(text) : NaN;
  if (!(value >= min && value <= max)) {
    throw new OpsError('BAD_REQUEST', 400, `${name} must be a whole number from ${min} to ${max}.`);
  }
  return value;
}

/** `?limit=&offset=` of a list request, checked. */
export function pageOf(url: URL, pageSize: number): { limit: number; offset: number } {
  return {
    limit: whole('limit', url.searchParams.get('limit'), pageSize, MAX_PAGE_SIZE, 1),
    offset: whole('offset', url.searchParams.get('offset'), 0, 1_000_000_000, 0),
  };
}

/** A failed alert as the JSON API lists it (dates as ISO strings, `failedAt` `null` when unknown). */
export interface FailedAlertJson extends Omit<AlertRecord<'failed'>, 'receivedAt' | 'failedAt'> {
  receivedAt: string;
  failedAt: string | null;
}

/** The body of `GET api/failed`. */
export function failedJson(page: FailedPage): {
  alerts: FailedAlertJson[];
  limit: number;
  offset: number;
  next: number | null;
} {
  const iso = (ms: number | undefined): string | null =>
    ms === undefined || !Number.isFinite(ms) ? null : new Date(ms).toISOString();
  return {
    alerts: page.alerts.map((failed) => ({
      ...failed,
      receivedAt: iso(failed.receivedAt) ?? '',
      failedAt: iso(failed.failedAt),
    })),
    limit: page.limit,
    offset: page.offset,
    next: page.next,
  };
}
