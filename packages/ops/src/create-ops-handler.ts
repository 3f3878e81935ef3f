import { CSRF_HEADER, createCsrfTokens } from './csrf.js';
import { createNodeListener, type Incoming } from './node-listener.js';
import { OpsError } from './ops-error.js';
import type { OpsHandler, OpsHandlerOptions } from './options.js';
import { renderPage } from './page-html.js';
import { answerFor, errorAnswer, json, newNonce, pagePolicy, respond } from './responses.js';
import { resolveOptions, type ResolvedOptions } from './resolve-options.js';
import { readRequestText, readRetryTarget } from './retry-body.js';
import { failedJson, pageOf, routeOf } from './routes.js';
import { crossSiteReason } from './same-origin.js';
import { readFailed, readStatus, retryAlerts } from './store-reads.js';

/** `undefined` when `request` may go on; else the answer: `401`, or the `Response` `authorize` gave. */
async function refusal(options: ResolvedOptions, request: Request): Promise<Response | undefined> {
  if (options.authorize === undefined) return undefined;
  let verdict: unknown;
  try {
    verdict = await options.authorize(request);
  } catch (error) {
    options.logError({ err: error }, 'ops: authorize threw; the request was refused');
    return errorAnswer(
      new OpsError('AUTHORIZE_FAILED', 500, 'The authorization check failed; see the server log.'),
    );
  }
  if (verdict === true) return undefined;
  if (verdict instanceof Response) return verdict;
  return errorAnswer(new OpsError('UNAUTHORIZED', 401, 'Not authorized to see failed alerts.'));
}

/**
 * The operations page and its JSON API, over one back end's failed set: a Fetch handler
 * (`(request) => Promise<Response>`) with `.node(req, res)`, served under any path. Under the
 * mount point `<base>`: `GET <base>` is the page, `GET <base>/api/failed?limit=&offset=` the failed
 * alerts (newest first), `GET <base>/api/counts` the counts and the store's health, and `POST
 * <base>/api/retry` (`{ "id": "..." }` or `{ "all": true }`) retries.
 *
 * Every request goes through `authorize` first, before anything else is read of it (on Node, its
 * body is not read before; a method other than `GET`, and `POST` for a retry, is answered `405`
 * with `Allow` after it). A retry must also come from the page's own
 * origin and carry the CSRF token that every authorized `GET` answer holds in its
 * `x-churn-risk-csrf` header (the page sends it back in the same header). A `TypeError` at
 * creation names a missing or wrong option.
 *
 * @example
 * const ops = createOpsHandler({
 *   queue, // createRedisQueue(...), createPostgresQueue(...), createSqsQueue(...)
 *   authorize: (request) => request.headers.get('authorization') === `Bearer ${process.env.OPS_TOKEN}`,
 * });
 * http.createServer((req, res) => void ops.node(req, res)).listen(3000);
 */
export function createOpsHandler(options: OpsHandlerOptions): OpsHandler {
  const resolved = resolveOptions(options);
  const csrf = createCsrfTokens(resolved.csrfSecret);

  // Nothing but `authorize` looks at a request before it is let through: its body is read only
  // by a retry, after the method, origin, CSRF token and content type were checked.
  async function serve(request: Request, incoming: Incoming): Promise<Response> {
    const refused = await refusal(resolved, request);
    if (refused !== undefined) return refused;
    const url = new URL(request.url);
    const route = routeOf(url.pathname);
    const method = incoming.method.toUpperCase();
    if (route === 'retry') {
      if (method !== 'POST') {
        return errorAnswer(new OpsError('METHOD_NOT_ALLOWED', 405, 'Retry with POST.'), {
          allow: 'POST',
        });
      }
      const reason = crossSiteReason(request);
      if (reason !== undefined) {
        throw new OpsError('CROSS_SITE', 403, `Refused: ${reason}; retry from the page itself.`);
      }
      if (!(await csrf.verify(request.headers.get(CSRF_HEADER), Date.now()))) {
        throw new OpsError(
          'CSRF_TOKEN_INVALID',
          403,
          `The ${CSRF_HEADER} header holds no valid token: reload the page (a token lasts two hours; ` +
            'behind several instances, give each the same csrfSecret).',
        );
      }
      const retried = await retryAlerts(
        resolved,
        await readRetryTarget(request.headers.get('content-type'), incoming.text),
      );
      return json(200, { retried }, { [CSRF_HEADER]: await csrf.issue(Date.now()) });
    }
    if (method !== 'GET') {
      return errorAnswer(new OpsError('METHOD_NOT_ALLOWED', 405, 'Only GET here.'), {
        allow: 'GET',
      });
    }
    const token = { [CSRF_HEADER]: await csrf.issue(Date.now()) };
    if (route === 'unknown') throw new OpsError('NOT_FOUND', 404, 'No such operations API route.');
    if (route === 'counts') return json(200, await readStatus(resolved), token);
    const page = pageOf(url, resolved.pageSize);
    if (route === 'failed') return json(200, failedJson(await readFailed(resolved, page)), token);
    const [status, failed] = await Promise.all([
      readStatus(resolved),
      readFailed(resolved, page).catch((error: unknown) => ({
        error: error instanceof OpsError ? error.message : 'The failed alerts could not be read.',
      })),
    ]);
    const nonce = newNonce();
    const body = renderPage({
      status,
      failed,
      csrfToken: token[CSRF_HEADER],
      nonce,
      refreshMs: resolved.refreshMs,
      now: new Date(),
      invocationMode: resolved.invocationMode,
    });
    return respond(200, body, 'text/html; charset=utf-8', {
      ...token,
      'content-security-policy': pagePolicy(nonce),
    });
  }

  const answer = async (request: Request, incoming: Incoming): Promise<Response> => {
    try {
      return await serve(request, incoming);
    } catch (error) {
      return answerFor(error);
    }
  };
  const handle = (request: Request): Promise<Response> =>
    answer(request, {
      method: request.method,
      text: () => readRequestText(request, resolved.bodyTimeoutMs),
    });
  return Object.assign(handle, {
    fetch: handle,
    node: createNodeListener(answer, resolved.bodyTimeoutMs),
  });
}
