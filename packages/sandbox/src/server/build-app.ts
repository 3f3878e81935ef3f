import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import type { ChaosSettings } from '../chaos/chaos.js';
import type { SandboxClock } from '../clock/clock.js';
import { registerDashboardRoutes } from '../dashboard/dashboard-route.js';
import { createScriptLoader } from '../dashboard/dashboard-script.js';
import { dashboardState } from '../dashboard/dashboard-state.js';
import type { Deliveries } from '../deliveries/delivery-record.js';
import { registerAtRiskRoute } from '../routes/at-risk-route.js';
import { registerClockRoute } from '../routes/clock-route.js';
import { registerDeliveriesRoute } from '../routes/deliveries-route.js';
import { registerEventRoutes } from '../routes/event-routes.js';
import { registerStateRoute } from '../routes/state-route.js';
import { registerTestAlertRoute } from '../routes/test-alert-route.js';
import { registerUserRoutes } from '../routes/user-routes.js';
import { registerWatchRoutes } from '../routes/watch-routes.js';
import type { ChurnRiskService } from '../service/churn-risk-service.js';
import { ApiError } from './api-error.js';
import { createAuthenticator } from './authenticate.js';
import { registerIdempotency } from './idempotency.js';
import { createIdempotencyStore } from './idempotency-store.js';
import { registerJsonParser } from './parse-json-body.js';
import { createRateLimiter, type RateLimitOptions } from './rate-limiter.js';
import { toApiError } from './to-api-error.js';

/** What the HTTP layer needs. */
export interface AppOptions {
  apiKey: string;
  clock: SandboxClock;
  service: ChurnRiskService;
  deliveries: Deliveries;
  /** The chaos settings in effect (shown on the dashboard). */
  chaos: ChaosSettings;
  /** Time travel on a manual clock (`POST /v1/sandbox/clock`). */
  advanceClock: (ms: number) => Promise<unknown>;
  maxBodyBytes: number;
  rateLimit?: RateLimitOptions | undefined;
  logger?: boolean | undefined;
}

/**
 * The sandbox's Fastify app: request ids, API-key auth, the optional rate limit, body size limit,
 * idempotent replay, the REST API's and developer routes, the dashboard (public: it holds no
 * data) and the error bodies. Not yet listening.
 */
export function buildApp(options: AppOptions): FastifyInstance {
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: options.maxBodyBytes,
    genReqId: () => `req_${randomUUID()}`,
    // A userId may hold 256 characters, each up to 12 characters once percent-encoded.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 256 * 12 },
  });
  const authenticate = createAuthenticator(options.apiKey);
  const limit = options.rateLimit && createRateLimiter(options.rateLimit, options.clock);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (request.routeOptions.config.public === true) return;
    const key = authenticate(request.headers.authorization);
    const retryAfter = limit?.(key);
    if (retryAfter !== undefined) {
      reply.header('retry-after', String(retryAfter));
      throw new ApiError('RATE_LIMITED', `Too many requests: retry after ${retryAfter} s.`);
    }
  });

  registerJsonParser(app);
  registerIdempotency(app, createIdempotencyStore(options.clock), options.apiKey);
  registerUserRoutes(app, options.service);
  registerEventRoutes(app, options.service);
  registerAtRiskRoute(app, options.service);
  registerWatchRoutes(app, options.service);
  registerDeliveriesRoute(app, options.deliveries);
  registerTestAlertRoute(app, options.service);
  registerClockRoute(app, options.clock, options.advanceClock);
  registerStateRoute(app, () =>
    dashboardState(options.clock, options.service, options.deliveries, options.chaos),
  );
  registerDashboardRoutes(app, createScriptLoader());

  app.setNotFoundHandler(async (request, reply) => {
    const error = new ApiError(
      'NOT_FOUND',
      `No route ${request.method} ${request.url.split('?')[0] ?? ''}.`,
    );
    return reply.code(error.status).send(error.toBody());
  });
  app.setErrorHandler(async (error, request, reply) => {
    const apiError = toApiError(error, options.maxBodyBytes);
    if (apiError.code === 'SERVER_ERROR') request.log.error({ err: error }, 'unexpected error');
    if (apiError.code === 'UNAUTHORIZED') reply.header('www-authenticate', 'Bearer');
    return reply.code(apiError.status).send(apiError.toBody());
  });
  return app;
}
