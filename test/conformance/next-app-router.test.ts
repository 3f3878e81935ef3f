import { createRouteHandler } from '@churn-risk/next';
import { WEBHOOK_PATH } from './fixtures.js';
import { runConformanceSuite, type MountAdapter } from './suite.js';

// The App Router handler called outside a Next request scope, as a user's own test would call it:
// `after()` is unavailable there, so processing runs in-process (tracked by `receiver.drain`).
const mount: MountAdapter = async (receiver) => {
  const POST = createRouteHandler(receiver);
  return {
    async send({ method, headers, body }) {
      const request = new Request(`http://localhost${WEBHOOK_PATH}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
      });
      const response = await POST(request);
      return {
        status: response.status,
        headers: Object.fromEntries(response.headers),
        body: await response.text(),
      };
    },
    close: async () => undefined,
  };
};

runConformanceSuite('@churn-risk/next createRouteHandler (App Router)', mount);
runConformanceSuite('@churn-risk/next createRouteHandler (App Router)', mount, { queue: 'redis' });
