/** Child process entry: a default sandbox (no rate limit); reports its URL and API key,
 * and answers `'count'` with the users and events it stores. */
import { createSandbox } from '@churn-risk/sandbox';
import { tellParent } from '../lib/child.js';

const sandbox = await createSandbox();
tellParent({ url: sandbox.url, apiKey: sandbox.apiKey });
process.on('message', (message) => {
  if (message !== 'count') return;
  let users = 0;
  let events = 0;
  for (const user of sandbox.service.users.all()) {
    users += 1;
    events += user.events.length;
  }
  tellParent({ users, events });
});
process.on('disconnect', () => {
  void sandbox.close().finally(() => process.exit(0));
});
