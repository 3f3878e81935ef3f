/**
 * Child process entry of the durable-queue benchmarks: `<file> <name> <store URL> <namespace>`
 * starts the server `name` of `servers` against the store (a key prefix in Redis, a schema in
 * Postgres), reports its port, and answers the parent's CPU-time requests.
 */
import { answerCpuRequests } from './child-cpu.js';
import { tellParent } from './child.js';

/** A server: starts listening on 127.0.0.1 and resolves with its port. */
export type StoreServer = (target: { url: string; prefix: string }) => Promise<number>;

export async function serveChild(servers: Record<string, StoreServer>): Promise<void> {
  const [name = '', url = '', prefix = ''] = process.argv.slice(2);
  const start = servers[name];
  if (start === undefined) throw new Error(`unknown server "${name}"`);
  const port = await start({ url, prefix });
  tellParent({ port });
  process.on('disconnect', () => process.exit(0));
  answerCpuRequests();
}
