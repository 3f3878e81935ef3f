/**
 * `#node-request` on Node (and runtimes that resolve the `node` condition: Bun, Deno):
 * `receiver.node` on the one Node request path. Elsewhere `#node-request` is
 * `node-request-web.ts`, and a bundle for Workers or an edge runtime holds no Node request path.
 */
import type { NodeRequest, NodeResponse } from './node-types.js';
import { handleNodeRequest, sendNodeResponse } from './request-body.js';
import type { TransportReceiver } from './transports.js';
import type { Receiver } from './types.js';

/** The fix `RAW_BODY_MISSING` names for a Node request. */
const OPTIONS = { rawBodyFix: 'Hand the request to receiver.node before anything reads its body.' };

/**
 * `receiver.node`: a Node request listener on the one Node request path (`handleNodeRequest`). It
 * answers, and resolves once the answer is written (processing may go on; see `drain`). It never
 * rejects.
 */
export function createNodeHandler(receiver: TransportReceiver): Receiver['node'] {
  return async function nodeHandler(req: NodeRequest, res: NodeResponse): Promise<void> {
    const result = await handleNodeRequest(receiver, req, OPTIONS);
    if (result !== undefined) sendNodeResponse(res, result);
  };
}
