/**
 * Why a state-changing request does not come from the page's own origin, or `undefined` when it
 * may: a browser says where a request comes from in `Sec-Fetch-Site` (which must be
 * `same-origin`) and in `Origin` (whose host must be the request's, or the `X-Forwarded-Host` a
 * proxy set). A request with neither header comes from no browser page (a script, `curl`): it
 * still needs a CSRF token.
 */
export function crossSiteReason(request: Request): string | undefined {
  const site = request.headers.get('sec-fetch-site');
  if (site !== null && site !== 'same-origin') return `the request is ${site}`;
  const origin = request.headers.get('origin');
  if (origin === null) return undefined;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return 'the request has an opaque origin';
  }
  const own = new URL(request.url).host;
  const forwarded = request.headers.get('x-forwarded-host')?.split(',')[0]?.trim();
  return host === own || host === forwarded ? undefined : 'the request comes from another origin';
}
