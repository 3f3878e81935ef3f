import { OpsError } from './ops-error.js';

/** The largest body `POST api/retry` reads. */
export const MAX_BODY_BYTES = 4_096;

const tooLarge = (): OpsError =>
  new OpsError('PAYLOAD_TOO_LARGE', 413, `The body is larger than ${MAX_BODY_BYTES} bytes.`);

/** The body's text, read chunk by chunk and refused once it passes `MAX_BODY_BYTES`. */
async function readText(request: Request): Promise<string> {
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  if (request.body === null) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

/**
 * What `POST api/retry` asks for: `{ "id": "..." }` or `{ "all": true }`, as
 * `application/json` (a form cannot send it).
 */
export async function readRetryTarget(request: Request): Promise<{ id: string } | { all: true }> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new OpsError('UNSUPPORTED_MEDIA_TYPE', 415, 'Send the body as application/json.');
  }
  let body: unknown;
  try {
    body = JSON.parse(await readText(request));
  } catch (error) {
    if (error instanceof OpsError) throw error;
    throw new OpsError('BAD_REQUEST', 400, 'The body is not JSON.');
  }
  const { id, all } = (typeof body === 'object' && body !== null ? body : {}) as {
    id?: unknown;
    all?: unknown;
  };
  if (all === true && id === undefined) return { all: true };
  if (typeof id === 'string' && id.length > 0 && id.length <= 512 && all === undefined)
    return { id };
  throw new OpsError('BAD_REQUEST', 400, 'Send { "id": "<failed alert id>" } or { "all": true }.');
}
