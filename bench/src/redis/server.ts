/**
 * Child process entry: `server.ts <name> <redis URL> <prefix>` starts one server of servers.ts,
 * reports its port, and answers the parent's CPU-time requests.
 */
import { answerCpuRequests } from '../lib/child-cpu.js';
import { tellParent } from '../lib/child.js';
import { REDIS_SERVERS } from './servers.js';

const [name = '', url = '', prefix = ''] = process.argv.slice(2);
const start = REDIS_SERVERS[name];
if (start === undefined) throw new Error(`unknown server "${name}"`);
const port = await start({ url, prefix });
tellParent({ port });
process.on('disconnect', () => process.exit(0));
answerCpuRequests();
