/**
 * Child process entry: `server.ts <name> <redis URL> <prefix>` starts one server of servers.ts,
 * reports its port, and answers the parent's CPU-time requests.
 */
import { serveChild } from '../lib/server-child.js';
import { REDIS_SERVERS } from './servers.js';

await serveChild(REDIS_SERVERS);
