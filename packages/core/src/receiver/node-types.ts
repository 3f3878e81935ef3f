// The Node request path's types, declared by the members it uses rather than imported from
// `node:http` and `node:stream`: core's published `.d.ts` then needs no `@types/node`, so a
// Worker typed with `@cloudflare/workers-types` alone, or a project with `lib: ["dom"]`, type-checks
// with `skipLibCheck: false`. A `node:http` `IncomingMessage` and `ServerResponse` (and
// Express's, Koa's `ctx.req`/`ctx.res`) fit them as they are.

/** A Node request's headers: `IncomingHttpHeaders` of `node:http` (lower-case names). */
export type NodeHeaders = Record<string, string | readonly string[] | undefined>;

/** The events `readNodeBody` listens to. */
export type BodyEvent = 'data' | 'end' | 'error' | 'close';

/**
 * A Node readable request body: an `IncomingMessage`, or any `Readable` with optional headers
 * (the members `readNodeBody` uses).
 */
export interface NodeBodyStream {
  /** Its `content-length` is checked against the limit before anything is read. */
  headers?: NodeHeaders | undefined;
  /** True once the body was read to its end (by a body parser, for example). */
  readonly readableEnded: boolean;
  /** Stops the flow of data (a refused body is not read further). */
  pause(): unknown;
  /** Listens to the body's chunks, its end, an error, or the connection's close. */
  on(event: BodyEvent, listener: (value: unknown) => void): unknown;
  /** Removes a listener added with `on`. */
  off(event: BodyEvent, listener: (value: unknown) => void): unknown;
}

/** A Node request: an `IncomingMessage` of `node:http` (the members the receiver uses). */
export interface NodeRequest extends NodeBodyStream {
  /** The request's method (`POST` for a delivery). */
  method?: string | undefined;
  /** The request's headers, lower-case names. */
  headers: NodeHeaders;
  /** True once the connection is gone. */
  readonly destroyed: boolean;
}

/** A Node response: a `ServerResponse` of `node:http` (the members the receiver uses). */
export interface NodeResponse {
  /** True once the headers were written (the answer cannot be changed any more). */
  readonly headersSent: boolean;
  /** True once the answer was ended. */
  readonly writableEnded: boolean;
  /** True once the connection is gone. */
  readonly destroyed: boolean;
  /** The answer's status code. */
  statusCode: number;
  /** Sets one header of the answer. */
  setHeader(name: string, value: string): unknown;
  /** Writes the body and ends the answer. */
  end(body: string): unknown;
}

/**
 * A Node `(req, res)` request listener, as `receiver.node` is: it fits `http.createServer`,
 * Express and Connect as it is. Never rejects.
 */
export type NodeRequestListener = (req: NodeRequest, res: NodeResponse) => Promise<void>;
