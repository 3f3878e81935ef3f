import { WEBHOOK_PATH } from './fixtures.js';
import { runConformanceSuite, type MountAdapter } from './suite.js';

const mount: MountAdapter = async (receiver) => ({
  async send({ method, headers, body }) {
    const request = new Request(`http://localhost${WEBHOOK_PATH}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const response = await receiver.fetch(request);
    return {
      status: response.status,
      headers: Object.fromEntries(response.headers),
      body: await response.text(),
    };
  },
  close: async () => undefined,
});

runConformanceSuite('core receiver.fetch (Web Request)', mount);
runConformanceSuite('core receiver.fetch (Web Request)', mount, { queue: 'redis' });
