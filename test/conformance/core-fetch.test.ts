import { WEBHOOK_PATH } from './fixtures.js';
import { runConformanceSuite } from './suite.js';

runConformanceSuite('core receiver.fetch (Web Request)', async (receiver) => ({
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
}));
