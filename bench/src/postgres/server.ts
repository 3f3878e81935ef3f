/**
 * Child process entry, on Node >= 22.12 (pg-boss 12): `server.ts <name> <database URL> <schema>`
 * starts one server of servers.ts, reports its port, and answers the parent's CPU-time requests.
 */
import { serveChild } from '../lib/server-child.js';
import { POSTGRES_SERVERS } from './servers.js';

await serveChild(POSTGRES_SERVERS);
