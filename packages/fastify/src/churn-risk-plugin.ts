import { type Receiver } from '@churn-risk/core';
import { refuseUnknownOptions } from '@churn-risk/core/store';
import { payloadTooLarge, requestTimeout, type ReceiverResult } from '@churn-risk/core/adapter';
import type {
  FastifyError,
  FastifyPluginCallback,
  FastifyReply,
  FastifyRequest,
  RegisterOptions,
} from 'fastify';
import fp from 'fastify-plugin';

/** Options of `churnRiskPlugin`. */
export interface ChurnRiskPluginOptions {
  /** The receiver that verifies and dispatches deliveries (`createReceiver` of `@churn-risk/core`). */
  receiver: Receiver;
  /** The webhook route, relative to the `prefix` the plugin is registered with. */
  path: string;
  /** Longest wait for in-flight alerts when the app closes, in milliseconds. Default: no limit. */
  drainTimeoutMs?: number;
}

/**
 * The keys the plugin's options may hold: its own, and the ones Fastify itself reads from the
 * options of `register` (`RegisterOptions`), which reach the plugin in the same object.
 */
const OPTION_KEYS = [
  'receiver',
  'path',
  'drainTimeoutMs',
  'prefix',
  'logLevel',
  'logSerializers',
] as const satisfies readonly (keyof ChurnRiskPluginOptions | keyof RegisterOptions)[];

const RAW_TYPE = 'application/octet-stream';
/** The Content-Type each request arrived with, before the route's hook replaced it. */
const originalContentType = new WeakMap<FastifyRequest, string>();

/** Every method goes to the receiver, which answers 405 with `Allow: POST` to all but POST. */
const METHODS = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'];

function rawBodyOf(request: FastifyRequest): Uint8Array | null {
  return request.body instanceof Uint8Array ? request.body : null;
}

/** The code of the error a body not whole within `bodyTimeoutMs` fails Fastify's reading with. */
const BODY_TIMEOUT = 'CHURN_RISK_BODY_TIMEOUT';

/**
 * Fastify reads a body with no deadline: one not whole within `timeoutMs` (a sender that stalls,
 * a `Content-Length` larger than what it sends) fails the reading with a `BODY_TIMEOUT` error,
 * which the route's error handler answers `408`. The stream is paused: nothing more is read.
 */
function bodyDeadline(
  request: FastifyRequest,
  payload: NodeJS.ReadableStream,
  timeoutMs: number,
): void {
  if (request.raw.complete) return; // the body is all there
  const timer = setTimeout(() => {
    if (request.raw.complete || payload.listenerCount('error') === 0) return;
    payload.pause();
    payload.emit(
      'error',
      Object.assign(new Error(`The body was not complete within ${String(timeoutMs)} ms.`), {
        code: BODY_TIMEOUT,
        statusCode: 408,
      }),
    );
  }, timeoutMs);
  timer.unref();
  const clear = (): void => {
    clearTimeout(timer);
  };
  payload.once('end', clear);
  payload.once('close', clear);
}

/** Writes the receiver's answer: its status, headers and (already serialised) body. */
function send(reply: FastifyReply, result: ReceiverResult): void {
  void reply.code(result.status).headers(result.headers).send(result.body);
}

const plugin: FastifyPluginCallback<ChurnRiskPluginOptions> = (app, options, done) => {
  try {
    refuseUnknownOptions('churnRiskPlugin', options, OPTION_KEYS);
  } catch (error) {
    done(error as Error); // register (and app.ready) rejects with it
    return;
  }
  const { receiver, path } = options;
  // This scope is encapsulated: its parsers apply to the webhook route only, never to sibling routes.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(RAW_TYPE, { parseAs: 'buffer' }, (_request, body, next) => {
    next(null, body);
  });
  // The signature covers the bytes, not the Content-Type: whatever the sender wrote there (even a
  // value Fastify cannot parse, which would be a 415), the body is read raw, so that this route
  // answers exactly as the receiver does in every other adapter. The header itself is kept.
  app.addHook('onRequest', (request, _reply, done) => {
    const { headers } = request;
    const original = headers['content-type'];
    if (original !== undefined) originalContentType.set(request, original);
    headers['content-type'] = RAW_TYPE;
    done();
  });

  app.route({
    method: METHODS,
    url: path,
    bodyLimit: receiver.maxBodyBytes,
    preParsing(request, _reply, payload, next) {
      bodyDeadline(request, payload, receiver.bodyTimeoutMs);
      next(null, payload);
    },
    // Not `async`: the receiver's promise is the only one per delivery (an async handler adds its
    // own, which Fastify then waits on with one more `then`). Fastify waits for `reply.send`.
    handler(request: FastifyRequest, reply: FastifyReply): void {
      const { method, headers } = request;
      // Put back the Content-Type the hook replaced, for the receiver and for any later hook.
      const original = originalContentType.get(request);
      if (original === undefined) delete headers['content-type'];
      else headers['content-type'] = original;
      // `handle` never rejects (every failure is an answer); a rejection would reach Fastify's
      // error handling all the same.
      receiver.handle({ method, headers, body: rawBodyOf(request) }).then(
        (result) => {
          send(reply, result);
        },
        (error: unknown) => {
          void reply.send(error);
        },
      );
    },
    errorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
      if (error.code === BODY_TIMEOUT) {
        // The rest of the body stays unread: the connection goes after the answer.
        const refused = receiver.refuse(requestTimeout(receiver.bodyTimeoutMs)); // logged, counted
        send(reply, { ...refused, headers: { ...refused.headers, connection: 'close' } });
        return;
      }
      // Fastify stops reading at `bodyLimit`: answer with the receiver's own 413 body.
      if (error.code !== 'FST_ERR_CTP_BODY_TOO_LARGE') throw error;
      send(reply, receiver.refuse(payloadTooLarge(receiver.maxBodyBytes))); // logged, counted and passed to onRejected
    },
  });

  app.addHook('onClose', async () => {
    const { drainTimeoutMs } = options;
    await receiver.drain(drainTimeoutMs === undefined ? {} : { timeoutMs: drainTimeoutMs });
  });
  done();
};

/**
 * Fastify plugin that mounts a churn-risk webhook route. The route gets its own raw-body parser
 * for every content type and the receiver's body limit, inside its own encapsulated scope, so the
 * app's other routes keep parsing JSON; `prefix` applies as for any plugin. When the app closes,
 * the receiver is drained (in-flight alerts finish). An options key the plugin does not know (other
 * than Fastify's own `prefix`, `logLevel` and `logSerializers`) fails the `register` with a
 * `TypeError` that names it and the closest known key.
 *
 * @example
 * await app.register(churnRiskPlugin, { receiver, path: '/webhooks/churn-risk' });
 */
export const churnRiskPlugin: FastifyPluginCallback<ChurnRiskPluginOptions> = fp(plugin, {
  fastify: '5.x',
  name: '@churn-risk/fastify',
  // Keep the scope: the raw-body parser must not leak to the app's other routes.
  encapsulate: true,
});
