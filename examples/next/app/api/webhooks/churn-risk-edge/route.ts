import { createRouteHandler } from '@churn-risk/next';
import { listAlerts } from '../../../../lib/alert-store';
import { exampleReceiver } from '../../../../lib/receiver';

// The same handler on the edge runtime (deprecated by Next 16, still supported): no `node:` module
// reaches this bundle, and the core's HMAC uses @noble/hashes here instead of node:crypto.
export const runtime = 'edge';

export function POST(request: Request): Promise<Response> {
  return createRouteHandler(exampleReceiver('edge'))(request);
}

/** The edge runtime has its own globals: this lists the alerts that reached this route. */
export function GET(): Response {
  return Response.json({ alerts: listAlerts() });
}
