import type { IncomingMessage, ServerResponse } from 'node:http';

/** A request on which `rawBodySaver` kept the body's bytes. */
export interface RequestWithRawBody extends IncomingMessage {
  /** The body exactly as received (after `Content-Encoding` is undone), kept by `rawBodySaver`. */
  rawBody?: Buffer;
}

/**
 * A body-parser `verify` function that keeps the raw bytes on `req.rawBody`, so
 * `createMiddleware` can verify the signature after a global `express.json()` has parsed the body.
 *
 * @example
 * app.use(express.json({ verify: rawBodySaver }));
 */
export function rawBodySaver(req: IncomingMessage, _res: ServerResponse, buf: Buffer): void {
  (req as RequestWithRawBody).rawBody = buf;
}
