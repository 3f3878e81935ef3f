import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../server/api-error.js';
import { DASHBOARD_CSS } from './dashboard-css.js';
import { DASHBOARD_HTML } from './dashboard-html.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route anyone may fetch without the API key (the dashboard's page, styles and script). */
    public?: boolean;
  }
}

/** Headers of every dashboard file: nothing inline, nothing from elsewhere, no framing. */
export const DASHBOARD_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
} as const;

const serve = (reply: FastifyReply, type: string, body: string): FastifyReply =>
  reply.headers(DASHBOARD_HEADERS).type(type).send(body);

/**
 * `GET /dashboard` (the page), `/dashboard/app.css` and `/dashboard/js/<module>.js`: public (no
 * API key: they hold no data; the page reads the key from its URL fragment and calls the API).
 */
export function registerDashboardRoutes(
  app: FastifyInstance,
  loadScript: (name: string) => Promise<string | undefined>,
): void {
  const config = { public: true };
  app.get('/dashboard', { config }, (_request, reply) =>
    serve(reply, 'text/html; charset=utf-8', DASHBOARD_HTML),
  );
  app.get('/dashboard/app.css', { config }, (_request, reply) =>
    serve(reply, 'text/css; charset=utf-8', DASHBOARD_CSS),
  );
  app.get<{ Params: { file: string } }>(
    '/dashboard/js/:file',
    { config },
    async (request, reply) => {
      const name = /^(.+)\.js$/.exec(request.params.file)?.[1];
      const code = name === undefined ? undefined : await loadScript(name);
      if (code === undefined) throw new ApiError('NOT_FOUND', 'No such dashboard script.');
      return serve(reply, 'text/javascript; charset=utf-8', code);
    },
  );
}
