/** Child process entry: `server.ts <name>` starts one server of servers.ts and reports its port. */
import { tellParent } from '../lib/child.js';
import { SERVERS } from './servers.js';

const name = process.argv[2] ?? '';
const start = SERVERS[name];
if (start === undefined) throw new Error(`unknown server "${name}"`);
const port = await start();
tellParent({ port });
process.on('disconnect', () => process.exit(0));
// The parent reads this process's CPU time around each measured round (CPU per request).
process.on('message', (message) => {
  if (message === 'cpu') tellParent({ cpu: process.cpuUsage() });
});
