import { createRouteHandler } from '@churn-risk/next';
import { exampleReceiver } from '../../../../lib/receiver';

// App Router, Node.js runtime: answers 202 at once, then processes the alert inside `after()`.
// `next build` loads this module, where the secret may not be set: the receiver is made on first use.
export function POST(request: Request): Promise<Response> {
  return createRouteHandler(exampleReceiver('app-router'))(request);
}
