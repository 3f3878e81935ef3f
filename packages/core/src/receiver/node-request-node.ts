/**
 * `#node-request` on Node (and runtimes that resolve the `node` condition: Bun, Deno):
 * `receiver.node` on the one Node request path. Elsewhere `#node-request` is
 * `node-request-web.ts`, and a bundle for Workers or an edge runtime holds no Node request path.
 */
import type { NodeRequest, NodeResponse } from './node-types.js';
import { handleNodeRequest, sendNodeResponse } from './request-body.js';
import { errorResponse } from './responses.js';
import type { Handle, Refuse } from './transports.js';
import type { Receiver } from './types.js';

/** The fix `RAW_BODY_MISSING` names for a Node request. */
const NODE_FIX = 'Hand the request to receiver.node before anything reads its body.';

/**
 * `receiver.node`: a Node request listener on the one Node request path (`handleNodeRequest`). It
 * answers, and resolves once the answer is written (processing may go on; see `drain`). It never
 * rejects.
 */
export function createNodeHandler(
  handle: Handle,
  maxBytes: number,
  refuse: Refuse = errorResponse,
  bodyTimeoutMs?: number,
): Receiver['node'] {
  const receiver = { handle, refuse, maxBodyBytes: maxBytes, bodyTimeoutMs };
  const options = { rawBodyFix: NODE_FIX };
  return async function nodeHandler(req: NodeRequest, res: NodeResponse): Promise<void> {
    const result = await handleNodeRequest(receiver, req, options);
    if (result !== undefined) sendNodeResponse(res, result);
  };
}
