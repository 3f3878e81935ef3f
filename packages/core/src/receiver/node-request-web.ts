/**
 * `#node-request` where only Web APIs exist (Workers, edge runtimes, browsers): there is no Node
 * request to answer, so `receiver.node` rejects with a `TypeError` that names `receiver.fetch`.
 * Keeping the Node request path out of such bundles is this file's purpose; see
 * `node-request-node.ts` for Node.
 */
import type { Receiver } from './types.js';

/** `receiver.node` where the `node` export condition did not apply: always rejects. */
export function createNodeHandler(): Receiver['node'] {
  return function nodeHandler(): Promise<void> {
    return Promise.reject(
      new TypeError(
        "receiver.node is for Node; @churn-risk/core was loaded without the 'node' export " +
          'condition (a Worker, an edge runtime, a browser): hand Web Requests to ' +
          'receiver.fetch(request).',
      ),
    );
  };
}
